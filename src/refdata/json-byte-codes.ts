// The bytes of JSON's structure, shared by the writer of request bodies (json-bytes.ts) and the
// reader of result pages (bulk/json-cursor.ts), which both work on UTF-8 bytes, not strings.

export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
