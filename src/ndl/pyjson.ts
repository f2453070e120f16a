/**
 * JSON exactly as Python's `json.dumps(obj)` writes it with default arguments (spec ndl.md §3):
 * separators `", "` and `": "`, `ensure_ascii=True`. Python escapes every character outside
 * printable ASCII (space..`~`), DEL included, as `\uXXXX` with lowercase hex; characters
 * above the BMP become a surrogate pair, which is exactly one escape per UTF-16 code unit of
 * the JS string. Also a small strict reader for the only shapes NDL uses (an object of string
 * values, a string, null), which keeps key order and never throws.
 */

const SHORT_ESCAPES: Record<number, string> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x08: '\\b',
  0x0c: '\\f',
};

/** `json.dumps(s)` for a string. */
export function dumpsString(s: string): string {
  let out = '"';
  let runStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c) continue;
    out += s.slice(runStart, i);
    out += SHORT_ESCAPES[c] ?? '\\u' + c.toString(16).padStart(4, '0');
    runStart = i + 1;
  }
  return out + s.slice(runStart) + '"';
}

/** `json.dumps(v)` for a VALUE: a repr string or null. */
export function dumpsValue(v: string | null): string {
  return v === null ? 'null' : dumpsString(v);
}

/** `json.dumps(dict(entries))` for string-valued entries, in the given order. */
export function dumpsEntries(entries: ReadonlyArray<readonly [string, string]>): string {
  return '{' + entries.map(([k, v]) => dumpsString(k) + ': ' + dumpsString(v)).join(', ') + '}';
}

export type JsonReadResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** A JSON value restricted to what NDL writes: null, a string, or an object of strings. */
export type NdlJson = null | string | Array<[string, string]>;

/**
 * Reads one NDL JSON value (null, a string, or an object whose values are all strings) from
 * the whole of `text`, keeping object key order (JS objects would move integer-like keys to
 * the front). Whitespace between tokens is accepted as JSON allows; anything else, including
 * duplicate keys, is an error value.
 */
export function readNdlJson(text: string): JsonReadResult<NdlJson> {
  const r: Reader = new Reader(text);
  try {
    r.ws();
    let value: NdlJson;
    if (r.peek() === '{') value = r.object();
    else if (r.peek() === '"') value = r.string();
    else if (text.startsWith('null', r.pos)) {
      r.pos += 4;
      value = null;
    } else r.fail('expected an object, a string or null');
    r.ws();
    if (r.pos !== text.length) r.fail('unexpected text after the value');
    return { ok: true, value };
  } catch (e) {
    if (e instanceof JsonSyntax) return { ok: false, error: e.message };
    throw e;
  }
}

class JsonSyntax extends Error {}

class Reader {
  pos = 0;
  constructor(private readonly text: string) {}

  peek(): string {
    return this.text[this.pos] ?? '';
  }

  fail(message: string): never {
    const at = this.pos >= this.text.length ? 'end of text' : `offset ${this.pos}`;
    throw new JsonSyntax(`${message} at ${at}`);
  }

  ws(): void {
    while (/[ \t\n\r]/.test(this.peek())) this.pos++;
  }

  expect(ch: string): void {
    if (this.peek() !== ch) this.fail(`expected '${ch}'`);
    this.pos++;
  }

  object(): Array<[string, string]> {
    this.expect('{');
    const entries: Array<[string, string]> = [];
    const seen = new Set<string>();
    this.ws();
    if (this.peek() === '}') {
      this.pos++;
      return entries;
    }
    for (;;) {
      this.ws();
      if (this.peek() !== '"') this.fail('expected a string key');
      const key = this.string();
      if (seen.has(key)) this.fail(`duplicate key ${JSON.stringify(key)}`);
      seen.add(key);
      this.ws();
      this.expect(':');
      this.ws();
      if (this.peek() !== '"') this.fail(`value of ${JSON.stringify(key)} must be a string`);
      entries.push([key, this.string()]);
      this.ws();
      if (this.peek() === ',') {
        this.pos++;
        continue;
      }
      this.expect('}');
      return entries;
    }
  }

  string(): string {
    this.expect('"');
    let out = '';
    for (;;) {
      const c = this.text.charCodeAt(this.pos);
      if (Number.isNaN(c)) this.fail('unterminated string');
      if (c === 0x22) {
        this.pos++;
        return out;
      }
      if (c < 0x20) this.fail('raw control character in string');
      if (c !== 0x5c) {
        out += this.text[this.pos++];
        continue;
      }
      const e = this.text[this.pos + 1];
      this.pos += 2;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          const hex = this.text.slice(this.pos, this.pos + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('bad \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          this.pos += 4;
          break;
        }
        default:
          this.pos -= 2;
          this.fail('bad escape');
      }
    }
  }
}
