// Until the generated client lands: a loose stand-in for the generated `paths`.
// biome-ignore lint/suspicious/noExplicitAny: temporary
export type paths = any;
