// The error pages' "Go back" button: shown only when there is a page to go back to.
(() => {
  for (const button of document.querySelectorAll('[data-action="back"]')) {
    if (window.history.length > 1) button.hidden = false;
    button.addEventListener('click', () => window.history.back());
  }
})();
