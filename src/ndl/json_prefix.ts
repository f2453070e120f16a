/**
 * NDL JSON read one byte at a time, for constrained decoding: after any prefix of a frame's
 * LOCALS or VALUE field, whether the text can still become what readNdlJson accepts (pyjson.ts)
 * and whether it already is a whole value. LOCALS is an object of string values whose keys are
 * distinct, with the elision marker `".."` only as its first key (and, given a KeyRule, from the
 * names the program's text allows); VALUE is a string or null.
 *
 * It works on UTF-8 bytes because a model's tokens are byte strings (a byte-fallback piece holds
 * a single byte of a character); every byte that JSON treats specially is ASCII, and the bytes
 * of other characters only ever occur inside strings.
 */

/** What the field holds: a frame's LOCALS (an object) or its VALUE (a string or null). */
export type JsonShape = 'locals' | 'value';

/**
 * Which keys a LOCALS object may hold: any of `names`, or, with `exact`, exactly those keys in
 * that order (a call frame's arguments).
 */
export interface KeyRule {
  names: ReadonlySet<string>;
  exact?: readonly string[];
}

/** Every prefix of a rule's names, built once per rule. */
const namePrefixes = new WeakMap<KeyRule, ReadonlySet<string>>();

function prefixesOf(rule: KeyRule): ReadonlySet<string> {
  let set = namePrefixes.get(rule);
  if (!set) {
    set = new Set([...rule.names].flatMap((n) => [...n].map((_, i) => n.slice(0, i + 1))));
    namePrefixes.set(rule, set);
  }
  return set;
}

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
  private keysRead: string[] = [];

  /** `keys`: which keys a LOCALS object may hold; any string when undefined. */
  constructor(
    readonly shape: JsonShape,
    private readonly keys?: KeyRule,
  ) {}

  /** A copy that reads on independently (the key list is copied on write). */
  clone(): JsonPrefix {
    const c = new JsonPrefix(this.shape, this.keys);
    c.mode = this.mode;
    c.nullAt = this.nullAt;
    c.escape = this.escape;
    c.hex = this.hex;
    c.key = this.key;
    c.keysRead = this.keysRead;
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
   * character only lengthens the string, so every token made of such bytes is valid here (not
   * so in a key that a KeyRule limits).
   */
  get inPlainString(): boolean {
    return inString(this.mode) && !this.escape && this.hex === 0 && !(this.mode === 'key' && this.keys);
  }

  /**
   * Inside a key that a KeyRule limits: the bytes that can come next (the names' next
   * characters, and the closing quote where the key is a whole name); undefined elsewhere.
   */
  get nextKeyBytes(): ReadonlySet<number> | undefined {
    if (this.mode !== 'key' || !this.keys || this.escape || this.hex > 0) return undefined;
    const out = new Set<number>();
    for (const n of this.namesLeft()) {
      if (!n.startsWith(this.key)) continue;
      out.add(n.length === this.key.length ? QUOTE : n.charCodeAt(this.key.length));
    }
    return out;
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
        if (b === 0x7d) return this.close();
        return this.openKey(b);
      case 'key_open':
        return this.openKey(b);
      case 'colon':
        return b === 0x3a ? 'value_open' : 'invalid';
      case 'value_open':
        return b === QUOTE ? 'value' : 'invalid';
      case 'next':
        if (b === 0x2c) return this.keys && !this.canName('') ? 'invalid' : 'key_open';
        return b === 0x7d ? this.close() : 'invalid';
      default:
        return 'invalid';
    }
  }

  private openKey(b: number): Mode {
    if (b !== QUOTE || (this.keys && !this.canName(''))) return 'invalid';
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
    if (this.keysRead.includes(this.key) || (this.key === ELISION_KEY && this.keysRead.length > 0)) return 'invalid';
    if (this.keys && !(this.keys.exact ? this.keys.exact[this.keysRead.length] === this.key : this.keys.names.has(this.key))) return 'invalid';
    this.keysRead = [...this.keysRead, this.key];
    return 'colon';
  }

  private lengthen(mode: Mode, b: number): Mode {
    if (mode !== 'key') return mode;
    this.key += String.fromCharCode(b);
    if (!this.keys) return mode;
    return this.canName(this.key) ? mode : 'invalid';
  }

  /**
   * Whether a key starting `prefix` can still be written: a name the rule allows and not yet
   * used, so that decoding never walks into a key it cannot finish.
   */
  private canName(prefix: string): boolean {
    if (!this.keys!.exact && prefix !== '' && !prefixesOf(this.keys!).has(prefix)) return false;
    return this.namesLeft().some((n) => n.startsWith(prefix));
  }

  /** The names a key may still be: the exact rule's next one, or the rule's names not yet written. */
  private namesLeft(): readonly string[] {
    const { exact, names } = this.keys!;
    return exact ? exact.slice(this.keysRead.length, this.keysRead.length + 1) : [...names].filter((n) => !this.keysRead.includes(n));
  }

  /** The object ends: with an exact rule, only once every key is there. */
  private close(): Mode {
    return this.keys?.exact && this.keysRead.length !== this.keys.exact.length ? 'invalid' : 'done';
  }
}

/** Whether `text` is a prefix of a valid field of this shape (complete or not). */
export function isJsonPrefix(shape: JsonShape, text: string): boolean {
  return new JsonPrefix(shape).push(Buffer.from(text, 'utf8'));
}
