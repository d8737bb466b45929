"""Hostile names for path tests: what a catalog, a manifest or a bundle from elsewhere may
contain."""

from __future__ import annotations

from hypothesis import strategies as st

KNOWN = (
    "..",
    ".",
    "",
    " ",
    "../x",
    "../../etc/passwd",
    "..\\..\\windows\\system32",
    "/etc/passwd",
    "\\\\server\\share\\x",
    "C:\\Windows\\win.ini",
    "C:x",
    "c:/x",
    "CON",
    "con",
    "NUL.txt",
    "nul .csv",
    "COM1",
    "LPT9.avi",
    "CONIN$",
    "AUX.",
    "PRN ",
    "a/../../b",
    "a\\..\\b",
    "./.hidden",
    ".bashrc",
    "x\x00y",
    "x\ny",
    "line\r\nbreak",
    "tab\there",
    "\x1b[31m",
    "file:stream",
    "name.",
    "name ",
    "~",
    "~/x",
    "-rf",
    "--help",
    "...",
    "....//....//",
    "%2e%2e%2f",
    "\u202egnp.exe",
    "ＣＯＮ",
    "．．／",
    "é" * 300,
    "a" * 1000,
    "seg-00000.avi/../../x",
    "/",
    "\\",
    "//",
    '?*<>|"',
)

#: characters that make trouble somewhere: separators, dots, drive colons, controls, wide and
#: look-alike forms
TROUBLE = st.sampled_from(
    [*"/\\.:~ \t\n\r\x00\x7f*?<>|\"'$%", "..", "\u202e", "\uff0e", "\uff0f", "\u2024"]
)

hostile_names = st.one_of(
    st.sampled_from(KNOWN),
    st.lists(
        st.one_of(
            TROUBLE,
            st.sampled_from(["CON", "nul", "com1", "LPT1", "etc", "passwd", "C:", "x"]),
            st.text(max_size=4),
        ),
        max_size=12,
    ).map("".join),
    st.text(max_size=300),
)
