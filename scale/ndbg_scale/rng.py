"""ndbg's seeded RNG (src/util/rng.ts): xoshiro128** seeded through splitmix32 from an FNV-1a
hash of (seed, *keys). Ported bit for bit, so the loader here shuffles rows exactly as ndbg's."""
from __future__ import annotations

M32 = 0xFFFFFFFF


def _hash_string(h: int, s: str) -> int:
    # FNV-1a over UTF-16 code units, as JavaScript's charCodeAt sees the string.
    data = s.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 0x01000193) & M32
    return h


def _key(k) -> str:
    if isinstance(k, bool) or not isinstance(k, (int, str)):
        raise TypeError(f"Rng keys are ints or strings, got {k!r}")
    return str(k)


def _rotl(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & M32


class Rng:
    def __init__(self, state):
        self.s = [w & M32 for w in state]
        if all(w == 0 for w in self.s):
            self.s[0] = 1

    @classmethod
    def from_keys(cls, seed: int, *keys) -> "Rng":
        h = _hash_string(0x811C9DC5, _key(seed))
        for k in keys:
            h = _hash_string(_hash_string(h, "\u0000"), _key(k))
        s = h
        words = []
        for _ in range(4):
            s = (s + 0x9E3779B9) & M32
            z = s
            z = ((z ^ (z >> 16)) * 0x85EBCA6B) & M32
            z = ((z ^ (z >> 13)) * 0xC2B2AE35) & M32
            words.append((z ^ (z >> 16)) & M32)
        return cls(words)

    def next_u32(self) -> int:
        s = self.s
        result = (_rotl((s[1] * 5) & M32, 7) * 9) & M32
        t = (s[1] << 9) & M32
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 11)
        return result

    def next(self) -> float:
        hi = self.next_u32() >> 5
        lo = self.next_u32() >> 6
        return (hi * 67108864 + lo) / 9007199254740992

    def int(self, n: int) -> int:
        return int(self.next() * n)

    def shuffle(self, items: list) -> list:
        for i in range(len(items) - 1, 0, -1):
            j = self.int(i + 1)
            items[i], items[j] = items[j], items[i]
        return items
