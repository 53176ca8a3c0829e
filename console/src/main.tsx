import '@picocss/pico/css/pico.min.css';
import './styles.css';
import { render } from 'preact';
import { App } from './app.js';

const root = document.getElementById('app')!;
// The static "Loading" line of index.html gives way to the app.
root.replaceChildren();
render(<App />, root);
