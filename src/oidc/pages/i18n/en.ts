/**
 * Every string a hosted page shows, in English. A translation is a copy of this file with the
 * values translated (same keys; `{name}` placeholders kept), listed in `../i18n.ts`.
 */
export const en = {
  // The page shell
  'shell.poweredBy': 'Secured by Gatehouse',
  'shell.privacy': 'Privacy policy',
  'shell.terms': 'Terms',
  'shell.support': 'Help: {email}',
  'shell.logoAlt': '{brand} logo',

  // Sign-in
  'signin.title': 'Sign in to {app}',
  'signin.heading': 'Sign in',
  'signin.sub': 'to continue to {app}',
  'signin.or': 'or',
  'signin.walletHeading': 'Solana wallet',
  'signin.walletSearching': 'Looking for wallets in this browser…',
  'signin.walletNoScript': 'Signing in with a wallet needs JavaScript. Turn it on and reload this page.',
  'signin.walletNone': 'No Solana wallet was found in this browser. Install one, then reload this page:',
  'signin.walletInstall': 'Get {wallet}',
  'signin.walletButton': 'Continue with {wallet}',
  'signin.walletDetected': 'Detected',
  'signin.provider': 'Continue with {provider}',

  // Why an upstream provider sent the browser back (the `error` of /signin/:id, see oidc/signin/provider-flow.ts)
  'providerError.cancelled': 'Sign-in was cancelled. Choose a way to continue.',
  'providerError.provider_error': 'The provider could not sign you in. Try again or choose another way.',
  'providerError.token_exchange_failed':
    'The provider did not confirm the sign-in. Try again or choose another way.',
  'providerError.invalid_id_token':
    'The provider’s answer could not be verified. Try again or choose another way.',
  'providerError.profile_unavailable':
    'Your profile could not be read from the provider. Try again or choose another way.',
  'providerError.telegram_invalid': 'The Telegram sign-in could not be verified. Try again.',
  'providerError.telegram_expired': 'The Telegram sign-in is too old. Sign in with Telegram again.',
  'providerError.not_enabled': 'This sign-in method is not available any more. Choose another way.',
  'providerError.account_conflict': 'That account is linked to another user.',
  'providerError.requirement_unavailable':
    'The wallet requirements cannot be checked right now. Try again in a moment.',
  'providerError.unexpected': 'Something went wrong. Try again or choose another way.',

  // Status messages (announced while the wallet works)
  'status.connecting': 'Connecting to {wallet}…',
  'status.approve': 'Approve the sign-in request in {wallet}…',
  'status.checking': 'Checking the signature…',
  'status.redirecting': 'Signed in. Taking you back to {app}…',
  'status.leaving': 'Taking you back to {app}…',

  // Errors people can act on (never developer wording)
  'error.walletRejected': 'The wallet did not approve the request. Try again when you are ready.',
  'error.walletNoAccount': 'The wallet did not share an account. Unlock it and try again.',
  'error.walletUnsupported': '{wallet} cannot sign a sign-in message. Choose another wallet.',
  'error.signatureInvalid': 'The wallet’s signature could not be confirmed. Try again.',
  'error.tooSlow': 'The request took too long. Try again.',
  'error.expired': 'This sign-in link has expired. Go back to {app} and start again.',
  'error.tooMany': 'Too many attempts. Wait a minute and try again.',
  'error.network': 'The server could not be reached. Check your connection and try again.',
  'error.generic': 'Something went wrong. Try again.',
  'error.requirementUnavailable':
    'The wallet requirements cannot be checked right now. Try again in a moment.',

  // Consent
  'consent.heading': '{app} wants to access your {brand} account',
  'consent.signedInAs': 'Signed in as {who}',
  'consent.useAnotherWallet': 'Use another wallet',
  'consent.useAnotherAccount': 'Use another account',
  'consent.wouldLike': 'This will allow {app} to:',
  'consent.allow': 'Allow',
  'consent.deny': 'Deny',
  'consent.note': 'You can remove this access at any time from your account.',
  'consent.noScript': 'Answering needs JavaScript. Turn it on and reload this page.',
  'scope.openid': 'Know who you are on {brand}',
  'scope.profile': 'See your name, username and profile picture',
  'scope.email': 'See your email address ({email})',
  'scope.offline_access': 'Stay connected when you are not using the app',
  'scope.wallet': 'See your wallet addresses',
  'scope.gates': "See which of {brand}'s access requirements your wallets meet",

  // An app's required gate policy not met (DESIGN §3 "Gates in tokens")
  'unmet.title': "You can't sign in to {app} with this account",
  'unmet.lead':
    '{app} is open to accounts with a wallet that meets its access requirement, and none of the wallets linked to your account meets it.',
  'unmet.noWallet':
    '{app} is open to accounts with a wallet that meets its access requirement, and your account has no wallet linked.',
  'unmet.requirement': 'What {app} requires',
  'unmet.hint':
    'If a wallet of yours meets it, sign in with that wallet or link it to your account, then try again. Holdings are checked again within 5 minutes.',
  'unmet.device': 'The device was not connected. You can close this page.',

  // Device
  'device.title': 'Connect a device',
  'device.sub': 'Enter the code shown on your TV, console or command line.',
  'device.codeLabel': 'Device code',
  'device.codeHint': 'It looks like ABCD-EFGH.',
  'device.continue': 'Continue',
  'device.wrongCode': 'That code is wrong or has expired. Check the code on your device and try again.',
  'device.confirmTitle': 'Connect {app}',
  'device.confirmHeading': 'Connect {app} to your {brand} account',
  'device.checkCode': 'Only continue if your device shows this code:',
  'device.approve': 'Approve',
  'device.deny': 'Deny',
  'device.approvedTitle': 'Device connected',
  'device.approvedBody': '{app} is now connected. You can go back to your device.',
  'device.deniedTitle': 'Request denied',
  'device.deniedBody': '{app} was not connected. You can go back to your device.',
  'device.staleForm': 'This page was open for too long. Start again from your device.',
  'device.requirementUnavailable':
    'The wallet requirements cannot be checked right now. Try again in a moment.',
  'device.tryAgain': 'Try again',

  // Error pages
  'errorPage.title': 'This sign-in request cannot be completed',
  'errorPage.code': 'Error code: {code}',
  'errorPage.back': 'Go back',
  'errorPage.backTo': 'Back to {app}',
  'errorPage.contact': 'Need help? Write to {email}.',
  'errorPage.expired':
    'This sign-in link has expired or was already used. Go back to the app and start again.',
  'errorPage.notFound': 'This page does not exist or is no longer available.',
  'errorPage.badRequest': 'The app sent a sign-in request this service cannot accept.',
  'errorPage.forbidden': 'This request was refused to protect your account.',
  'errorPage.tooMany': 'Too many attempts from this network. Wait a minute and try again.',
  'errorPage.server': 'Something went wrong on our side. Try again in a moment.',

  // Signed out
  'signedOut.title': 'You are signed out',
  'signedOut.body': 'You have signed out of {brand}. You can close this page.',
  'signedOut.bodyNoBrand': 'You have signed out. You can close this page.',
};

export type MessageKey = keyof typeof en;
export type Catalog = Record<MessageKey, string>;
