/**
 * NDL JSON read one byte at a time, for constrained decoding: after any prefix of a frame's
 * LOCALS or VALUE field, whether the text can still become what readNdlJson accepts (pyjson.ts)
 * and whether it already is a whole value. LOCALS is an object of string values whose keys are
 * distinct, with the elision marker `".."` only as its first key; VALUE is a string or null.
 *
 * It works on UTF-8 bytes because a model's tokens are byte strings (a byte-fallback piece holds
 * a single byte of a character); every byte that JSON treats specially is ASCII, and the bytes
 * of other characters only ever occur inside strings.
 */

/** What the field holds: a frame's LOCALS (an object) or its VALUE (a string or null). */
export type JsonShape = 'locals' | 'value';

type Mode =
  | 'start'
  | 'null'
  | 'open' // after `{`: a key or `}`
  | 'key' // inside a key string
  | 'colon'
  | 'value_open' // after `:`: a value string
  | 'value' // inside a value string
  | 'next' // after a value: `,` or `}`
  | 'key_open' // after `,`: a key
  | 'string' // inside a VALUE string
  | 'done'
  | 'invalid';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NULL = Buffer.from('null');
const SIMPLE_ESCAPES = new Set([...'"\\/bfnrt'].map((c) => c.charCodeAt(0)));
const ELISION_KEY = '..';

function isWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
}

function isHexDigit(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
}

function inString(mode: Mode): boolean {
  return mode === 'key' || mode === 'value' || mode === 'string';
}

export class JsonPrefix {
  private mode: Mode = 'start';
  /** Bytes of `null` matched so far. */
  private nullAt = 0;
  /** A backslash has just opened an escape. */
  private escape = false;
  /** Hex digits still due in a `\u` escape. */
  private hex = 0;
  /** The key being read, as latin1 text of its raw bytes (enough to tell keys apart). */
  private key = '';
  private keys: string[] = [];

  constructor(readonly shape: JsonShape) {}

  /** A copy that reads on independently (the key list is copied on write). */
  clone(): JsonPrefix {
    const c = new JsonPrefix(this.shape);
    c.mode = this.mode;
    c.nullAt = this.nullAt;
    c.escape = this.escape;
    c.hex = this.hex;
    c.key = this.key;
    c.keys = this.keys;
    return c;
  }

  /** The text is a whole value: nothing but whitespace may follow. */
  get complete(): boolean {
    return this.mode === 'done';
  }

  /** No continuation can make the text valid. */
  get invalid(): boolean {
    return this.mode === 'invalid';
  }

  /**
   * Inside a string with no escape pending: a byte that is not a quote, a backslash or a control
   * character only lengthens the string, so every token made of such bytes is valid here.
   */
  get inPlainString(): boolean {
    return inString(this.mode) && !this.escape && this.hex === 0;
  }

  /** Reads `bytes`; false (and invalid from then on) when they cannot continue a valid value. */
  push(bytes: Uint8Array): boolean {
    for (const b of bytes) {
      this.mode = this.next(b);
      if (this.mode === 'invalid') return false;
    }
    return true;
  }

  private next(b: number): Mode {
    const mode = this.mode;
    if (inString(mode)) return this.stringByte(mode, b);
    if (mode === 'null') {
      if (b !== NULL[this.nullAt]) return 'invalid';
      this.nullAt++;
      return this.nullAt === NULL.length ? 'done' : 'null';
    }
    if (isWhitespace(b)) return mode;
    switch (mode) {
      case 'start':
        if (this.shape === 'locals') return b === 0x7b ? 'open' : 'invalid';
        if (b === QUOTE) return 'string';
        if (b === NULL[0]) {
          this.nullAt = 1;
          return 'null';
        }
        return 'invalid';
      case 'open':
        if (b === 0x7d) return 'done';
        return this.openKey(b);
      case 'key_open':
        return this.openKey(b);
      case 'colon':
        return b === 0x3a ? 'value_open' : 'invalid';
      case 'value_open':
        return b === QUOTE ? 'value' : 'invalid';
      case 'next':
        if (b === 0x2c) return 'key_open';
        return b === 0x7d ? 'done' : 'invalid';
      default:
        return 'invalid';
    }
  }

  private openKey(b: number): Mode {
    if (b !== QUOTE) return 'invalid';
    this.key = '';
    return 'key';
  }

  private stringByte(mode: Mode, b: number): Mode {
    if (this.escape) {
      this.escape = false;
      if (b === 0x75) this.hex = 4;
      else if (!SIMPLE_ESCAPES.has(b)) return 'invalid';
      return this.lengthen(mode, b);
    }
    if (this.hex > 0) {
      if (!isHexDigit(b)) return 'invalid';
      this.hex--;
      return this.lengthen(mode, b);
    }
    if (b < 0x20) return 'invalid';
    if (b === BACKSLASH) {
      this.escape = true;
      return this.lengthen(mode, b);
    }
    if (b !== QUOTE) return this.lengthen(mode, b);
    if (mode === 'string') return 'done';
    if (mode === 'value') return 'next';
    // A key ends: it must be new, and the elision marker may only come first.
    if (this.keys.includes(this.key) || (this.key === ELISION_KEY && this.keys.length > 0)) return 'invalid';
    this.keys = [...this.keys, this.key];
    return 'colon';
  }

  private lengthen(mode: Mode, b: number): Mode {
    if (mode === 'key') this.key += String.fromCharCode(b);
    return mode;
  }
}

/** Whether `text` is a prefix of a valid field of this shape (complete or not). */
export function isJsonPrefix(shape: JsonShape, text: string): boolean {
  return new JsonPrefix(shape).push(Buffer.from(text, 'utf8'));
}
