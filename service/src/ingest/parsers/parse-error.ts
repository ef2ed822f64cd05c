/** A record that cannot be read; the message is shown to the sender. */
export class ParseError extends Error {}
