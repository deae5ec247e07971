"""Hypothesis strategies for files gone wrong: a valid seed, mutated the ways real files break.

Byte edits at random places (a byte changed, a run deleted, the file cut short, a line doubled
or dropped) and insertions of the tokens that carry structure in the formats we read
(delimiters, quotes, brackets, separators, numbers at and past their ranges, invalid UTF-8,
a byte-order mark, NUL).
"""

from __future__ import annotations

from hypothesis import strategies as st

TOKENS = (
    b"\t",
    b",",
    b'"',
    b"'",
    b"\n",
    b"\r\n",
    b"\r",
    b"\\",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b"null",
    b"true",
    b"-1",
    b"0",
    b"6",
    b"99",
    b"1e309",
    b"NaN",
    b"Infinity",
    b"9" * 30,
    b"__eou__",
    b"USER",
    b"SYSTEM",
    b"OVERALL",
    b"usr",
    b"sys",
    b"\xff",
    b"\xc3",
    b"\xef\xbb\xbf",
    b"\x00",
    "\u00e9\u202e\u200b".encode(),
    b" ",
    b"",
    b'{"a": [',
    b"[[[[[[[[[[[[[[[[[[[[",
)


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["token", "byte", "delete", "truncate", "line"]))
        if action == "token":
            data[at:at] = draw(st.sampled_from(TOKENS)) * draw(st.integers(1, 3))
        elif action == "byte" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif action == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        elif action == "truncate":
            del data[at:]
        elif action == "line":
            lines = bytes(data).split(b"\n")
            index = draw(st.integers(0, len(lines) - 1))
            if draw(st.booleans()):
                lines.insert(index, lines[index])
            else:
                del lines[index]
            data = bytearray(b"\n".join(lines))
    return bytes(data)


def inputs(seed: bytes) -> st.SearchStrategy[bytes]:
    """Mostly mutated seeds (they get past the first checks), sometimes plain random bytes."""
    return st.one_of(mutated(seed), mutated(seed), mutated(seed), st.binary(max_size=600))
