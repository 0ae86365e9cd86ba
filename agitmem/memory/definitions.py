"""Where a language defines things: a line that opens a definition, and
the definition's name, by file extension.

The hooks name the definition an edit is in (`current_symbol` is judged
against it), so a language with no rule leaves every edit of it without a
place.  Each pattern matches one line; group 1 is the name, and a second
group, where there is one, qualifies it (Terraform's
`resource "aws_s3_bucket" "logs"` is aws_s3_bucket.logs).  A language
with no table of its own gets the generic keyword-led rule; data and
prose files get none.  Standard library only: the post-edit hook runs it.
"""
from __future__ import annotations

import re

# modifiers before a JVM / .NET / Swift / Dart member (and its annotations)
_MODS = (
    r'(?:(?:@\w+(?:\([^)]*\))?|public|private|protected|internal|fileprivate|open|static|final|abstract|'
    r'override|virtual|sealed|partial|async|readonly|unsafe|extern|new|suspend|inline|data|synchronized|native|'
    r'default|mutating|nonmutating|convenience|required|lazy|implicit|lateinit|external|factory|const|'
    r'class(?=\s+(?:func|var)))\s+)*'
)
# words that open a statement, never a definition, where a call looks like one
_NOT_A_NAME = r'(?!(?:if|for|foreach|while|switch|return|else|catch|using|lock|new|throw|case|when|do|try|await|yield|sizeof|typeof|nameof|assert|super|this)\b)'

_PY = (r'^\s*(?:async\s+)?def\s+(\w+)', r'^\s*class\s+(\w+)')
_JS = (
    r'^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(\w+)',
    r'^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(\w+)',
    r'^\s*(?:export\s+)?(?:const|let|var)\s+(\w+)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|\w+\s*=>)',
    r'^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type|enum|namespace)\s+(\w+)',
    r'^\s+(?:public\s+|private\s+|protected\s+|static\s+|async\s+|readonly\s+|get\s+|set\s+)*'
    r'(?!if\b|for\b|while\b|switch\b|catch\b|return\b)(\w+)\s*\([^;]*\)\s*(?::[^{;]+)?\{\s*$',
)
_C = (
    r'^(?!\s*(?:if|for|foreach|while|switch|return|else|catch)\b)[\w\s\*&:<>,~]*?\b([A-Za-z_]\w*(?:::~?\w+)?)\s*\([^;]*\)\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?\{?\s*$',
    r'^\s*(?:typedef\s+)?(?:struct|class|union|enum(?:\s+class)?|namespace)\s+(\w+)',
)
_JAVA = (
    rf'^\s*{_MODS}(?:class|interface|enum|object|record|@interface)\s+(\w+)',
    rf'^\s*{_MODS}fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(\w+)',
    r'^\s*(?:(?:@\w+(?:\([^)]*\))?|public|private|protected|static|final|abstract|synchronized|native|default)\s+)+'
    r'[\w<>\[\],.?\s]+?\s(\w+)\s*\([^;]*$',
)
# C#: members need no modifier (an interface's, a class's private ones)
_CS = (
    rf'^\s*{_MODS}(?:class|interface|struct|enum|record(?:\s+(?:class|struct))?|namespace|delegate\s+[\w<>\[\],.?]+)\s+([\w.]+)',
    rf'^\s*{_MODS}{_NOT_A_NAME}[\w<>\[\],.?()]+\s+{_NOT_A_NAME}(\w+)\s*(?:<[^>(]*>)?\s*\([^;]*$',
    # a property with a body: `public int Count {` / `=> ...`
    rf'^\s*{_MODS}{_NOT_A_NAME}[\w<>\[\],.?]+\s+(\w+)\s*(?:\{{\s*(?:get|set|init)?\b.*|=>.*)$',
    # ... its brace on the next line (Allman): a modifier says it is a member
    r'^\s*(?:(?:public|private|protected|internal|static|override|virtual|abstract|sealed|new)\s+)+[\w<>\[\],.?]+\s+(\w+)\s*$',
)
_SWIFT = (
    rf'^\s*{_MODS}func\s+([\w]+|[^\s(<]+)',
    rf'^\s*{_MODS}(?:class|struct|enum|protocol|extension|actor)\s+([\w.]+)',
    rf'^\s*{_MODS}(init|deinit)\b',
    rf'^\s*{_MODS}(?:var|let)\s+(\w+)\s*:[^=]*\{{\s*$',  # a computed property
)
_SCALA = (
    rf'^\s*{_MODS}(?:case\s+)?(?:class|object|trait|enum)\s+(\w+)',
    rf'^\s*{_MODS}def\s+(\w+)',
    rf'^\s*{_MODS}(?:val|lazy\s+val)\s+(\w+)\s*(?::[^=]*)?=\s*(?:\{{|\(.*\)\s*=>).*$',
)
_DART = (
    r'^\s*(?:abstract\s+|sealed\s+|base\s+|final\s+)*(?:class|mixin|extension|enum)\s+(\w+)',
    rf'^\s*{_MODS}(?:[\w<>?,\[\]]+\s+)?(?:get\s+|set\s+)?{_NOT_A_NAME}(\w+)\s*(?:<[^>(]*>)?\s*\([^;]*\)\s*(?:async\*?\s*|sync\*\s*)?(?:\{{|=>).*$',
)
_RUBY = (r'^\s*def\s+(?:self\.)?([\w?!=]+)', r'^\s*(?:class|module)\s+([\w:]+)')
_CRYSTAL = (
    r'^\s*(?:private\s+|protected\s+|abstract\s+)*def\s+(?:self\.)?([\w?!=]+)',
    r'^\s*(?:abstract\s+)?(?:class|module|struct|enum|lib)\s+([\w:]+)',
    r'^\s*macro\s+(\w+)',
)
_ELIXIR = (
    r'^\s*(?:def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate|defn|defnp)\s+([a-z_]\w*[?!]?)',
    r'^\s*(?:defmodule|defprotocol|defimpl)\s+([\w.]+)',
)
# Erlang: a function clause head at the margin, `name(Args) [when G] ->`
_ERLANG = (r"^([a-z][\w@]*|'[^']+')\s*\(", r'^-(?:record|type|opaque|callback)\s*\(\s*(\w+)')
_HASKELL = (
    r'^(?:data|newtype|type(?:\s+family)?|class|instance)\s+(?:\([^)]*\)\s*=>\s*)?([A-Z][\w\']*)',
    r"^(?!(?:import|module|where|let|in|if|then|else|case|of|do|infix[lr]?|deriving|default|foreign)\b)([a-z_][\w']*)\b[^=\n]*(?:=|::)",
)
_ELM = (
    r'^type\s+(?:alias\s+)?([A-Z]\w*)',
    r'^(?!(?:import|module|port|type|if|then|else|case|of|let|in)\b)([a-z]\w*)\b[^=\n]*(?:=|:)',
)
_OCAML = (
    r"^\s*(?:let|and)\s+(?:rec\s+)?(?!\(\))([a-z_][\w']*)",
    r'^\s*module\s+(?:type\s+)?([A-Z]\w*)',
    r"^\s*type\s+(?:'\w+\s+|\([^)]*\)\s+)?([a-z_]\w*)",
)
_FSHARP = (
    r"^\s*(?:let|and)\s+(?:rec\s+|inline\s+|private\s+|mutable\s+)*(?!\(\))([a-z_A-Z][\w']*)",
    r"^\s*(?:static\s+)?(?:member|override|abstract\s+member|default)\s+(?:\w+\.)?([A-Za-z_][\w']*)",
    r'^\s*type\s+(?:private\s+)?([A-Z]\w*)',
    r'^\s*module\s+(?:rec\s+)?([\w.]+)',
)
_LUA = (
    r'^\s*(?:local\s+)?function\s+([\w.:]+)',
    r'^\s*(?:local\s+)?([\w.]+)\s*=\s*function\b',
)
_NIM = (
    r'^\s*(?:proc|func|method|iterator|template|macro|converter)\s+`?(\w+)',
    r'^\s*type\s+(\w+)',
    r'^\s+(\w+)\*?\s*(?:\[[^\]]*\])?\s*=\s*(?:ref\s+|ptr\s+)?(?:object|enum|tuple|distinct|concept)\b',
)
_LISP = (
    r'^\s*\((?:define(?:-\w+)?|defn-?|defmacro|defun|defvar|defparameter|def|defmethod|defmulti|defprotocol|'
    r'defrecord|defstruct|deftype|defclass|defgeneric)\s+\(?([^\s()\[\]]+)',
)
_PERL = (r'^\s*sub\s+(\w+)', r'^\s*package\s+([\w:]+)')
_GROOVY = (r'^\s*(?:(?:public|private|protected|static|final|abstract)\s+)*def\s+(\w+)\s*\(', *_JAVA)
# .m is MATLAB or Objective-C
_M = (
    r'^\s*function\s+(?:\[[^\]]*\]\s*=\s*|\w+\s*=\s*)?(\w+)',
    r'^\s*classdef\s+(?:\([^)]*\)\s*)?(\w+)',
    r'^[-+]\s*\([^)]*\)\s*(\w+)',
    r'^@(?:interface|implementation|protocol)\s+(\w+)',
)
_FORTRAN = (
    r'(?i)^\s*(?:(?:pure|elemental|impure|recursive|module|integer|real|logical|complex|character|'
    r'double\s+precision|type\s*\(\w+\))(?:\s*\([^)]*\))?\s+)*(?:subroutine|function)\s+(\w+)',
    r'(?i)^\s*(?:module|submodule\s*\([^)]*\)|program|block\s+data)\s+(?!procedure\b)(\w+)',
    r'(?i)^\s*type\s*(?:,[^:]*)?::\s*(\w+)',
)
# COBOL: a section or a paragraph (its name alone on a line, in area A)
_COBOL = (
    r'(?i)^[\s\d]{0,7}([A-Z0-9][\w-]*)\s+SECTION\s*\.',
    r'(?i)^[\s\d]{0,7}(?!(?:GOBACK|EXIT|CONTINUE|STOP|END-\w+|ELSE|END)\b)([A-Z0-9][\w-]*)\s*\.\s*$',
    r'(?i)^[\s\d]{0,7}PROGRAM-ID\.\s*([\w-]+)',
)
_VERILOG = (
    r'^\s*(?:module|macromodule|interface|program|package|class|primitive)\s+(?:automatic\s+|static\s+)?(\w+)',
    r'^\s*(?:virtual\s+|static\s+|protected\s+|local\s+)*(?:function|task)\s+(?:automatic\s+|static\s+)?(?:[\w\[\]:$]+\s+)*?(\w+)\s*[;(]',
)
_VHDL = (
    r'(?i)^\s*(?:entity|package(?:\s+body)?|component)\s+(\w+)',
    r'(?i)^\s*architecture\s+(\w+)\s+of\s+(\w+)',
    r'(?i)^\s*(?:(?:pure|impure)\s+)?(?:procedure|function)\s+(\w+)',
    r'(?i)^\s*(\w+)\s*:\s*process\b',
)
# SQL: routines and views, not a migration's tables (a migration is one step)
_SQL = (
    r'(?i)^\s*create\s+(?:or\s+replace\s+|or\s+alter\s+)?(?:temp(?:orary)?\s+|unique\s+|materialized\s+)?'
    r'(?:function|procedure|view|trigger|type|aggregate|domain)\s+'
    r'(?:if\s+not\s+exists\s+)?[`"\[]?((?:\w+[`"\]]?\.[`"\[]?)?\w+)',
)
_TERRAFORM = (
    r'^\s*(?:resource|data)\s+"([\w-]+)"\s+"([\w-]+)"',
    r'^\s*(?:module|variable|output|provider)\s+"([\w-]+)"',
    r'^\s*(locals|terraform)\s*\{',
)
_PROTO = (r'^\s*(?:message|enum|service|oneof|extend)\s+([\w.]+)', r'^\s*rpc\s+(\w+)')
_GRAPHQL = (
    r'^\s*(?:extend\s+)?(?:type|interface|input|enum|union|scalar)\s+(\w+)',
    r'^\s*directive\s+@(\w+)',
    r'^\s*(?:query|mutation|subscription|fragment)\s+(\w+)',
)
_SHELL = (r'^\s*function\s+([\w.:-]+)', r'^\s*([\w.:-]+)\s*\(\)\s*(?:\{.*)?$')
_PHP = (
    r'^\s*(?:(?:public|private|protected|static|final|abstract|readonly)\s+)*function\s+&?(\w+)',
    r'^\s*(?:(?:final|abstract|readonly)\s+)*(?:class|interface|trait|enum)\s+(\w+)',
)
_R = (r'^\s*([\w.]+)\s*(?:<-|=)\s*function\b',)
_JULIA = (
    r'^\s*(?:function|macro)\s+([\w.!]+)',
    r'^\s*([\w.!]+)\([^)]*\)\s*(?:where\b[^=]*)?=(?!=)',
    r'^\s*(?:mutable\s+)?struct\s+(\w+)',
    r'^\s*(?:module|baremodule|abstract\s+type|primitive\s+type)\s+(\w+)',
)
_ZIG = (
    r'^\s*(?:pub\s+)?(?:inline\s+|export\s+|extern\s+(?:"\w+"\s+)?)?fn\s+(\w+)',
    r'^\s*(?:pub\s+)?const\s+(\w+)\s*=\s*(?:extern\s+|packed\s+)?(?:struct|enum|union|opaque)\b',
    r'^\s*test\s+"([^"]+)"',
)
_GLEAM = (r'^\s*(?:pub\s+)?fn\s+(\w+)', r'^\s*(?:pub\s+)?(?:opaque\s+)?type\s+(\w+)')
_POWERSHELL = (r'(?i)^\s*(?:function|filter|workflow)\s+([\w-]+)', r'(?i)^\s*(?:class|enum)\s+(\w+)')
_GO = (r'^func\s+(?:\([^)]*\)\s*)?(\w+)', r'^type\s+(\w+)', r'^(?:var|const)\s+(\w+)')
_RUST = (
    r'^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"\w+"\s+)?fn\s+(\w+)',
    r'^\s*(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|mod|union)\s+(\w+)',
    r'^\s*impl(?:<[^>]*>)?\s+(?:[\w:<>]+\s+for\s+)?([\w:]+)',
)
# extension -> definition patterns, most specific first
PATTERNS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(('py', 'pyi', 'pyx'), _PY),
    **dict.fromkeys(('js', 'jsx', 'mjs', 'cjs', 'ts', 'tsx', 'mts', 'cts', 'vue', 'svelte'), _JS),
    'go': _GO, 'rs': _RUST,
    **dict.fromkeys(('java', 'kt', 'kts'), _JAVA),
    **dict.fromkeys(('c', 'h', 'cc', 'cpp', 'cxx', 'hpp', 'hh', 'hxx', 'ino', 'cu', 'mm'), _C),
    'cs': _CS, 'swift': _SWIFT, **dict.fromkeys(('scala', 'sc'), _SCALA), 'dart': _DART,
    **dict.fromkeys(('rb', 'rake', 'gemspec'), _RUBY), 'cr': _CRYSTAL,
    **dict.fromkeys(('ex', 'exs'), _ELIXIR), **dict.fromkeys(('erl', 'hrl'), _ERLANG),
    'hs': _HASKELL, 'elm': _ELM, **dict.fromkeys(('ml', 'mli'), _OCAML), **dict.fromkeys(('fs', 'fsi', 'fsx'), _FSHARP),
    'lua': _LUA, **dict.fromkeys(('nim', 'nims'), _NIM),
    **dict.fromkeys(('rkt', 'scm', 'ss', 'clj', 'cljs', 'cljc', 'edn', 'lisp', 'lsp', 'el'), _LISP),
    **dict.fromkeys(('pl', 'pm'), _PERL), **dict.fromkeys(('groovy', 'gradle'), _GROOVY), 'm': _M,
    **dict.fromkeys(('f', 'for', 'f77', 'f90', 'f95', 'f03', 'f08'), _FORTRAN),
    **dict.fromkeys(('cob', 'cbl', 'cpy'), _COBOL),
    **dict.fromkeys(('v', 'sv', 'svh', 'vh'), _VERILOG), **dict.fromkeys(('vhd', 'vhdl'), _VHDL),
    'sql': _SQL, **dict.fromkeys(('tf', 'hcl'), _TERRAFORM), 'proto': _PROTO,
    **dict.fromkeys(('graphql', 'gql', 'graphqls'), _GRAPHQL),
    **dict.fromkeys(('sh', 'bash', 'zsh', 'ksh'), _SHELL), 'fish': (r'^\s*function\s+([\w-]+)',),
    **dict.fromkeys(('ps1', 'psm1'), _POWERSHELL), 'php': _PHP, **dict.fromkeys(('r', 'R'), _R), 'jl': _JULIA,
    'zig': _ZIG, 'gleam': _GLEAM,
}
# a language with no table: a definition keyword, then a name
GENERIC = (
    r'^\s*(?:(?:export|public|private|protected|internal|static|pub|async|abstract|final|override|local)\s+)*'
    r'(?:def|defp|fn|fun|func|function|proc|procedure|sub|subroutine|method|class|struct|module|interface|trait|'
    r'enum|record|object|macro)\s+([A-Za-z_][\w.:!?]*)',
)
# data and prose: no definitions, whatever a line of them reads like
NONE = frozenset((
    'md', 'markdown', 'rst', 'txt', 'adoc', 'json', 'jsonl', 'yaml', 'yml', 'toml', 'ini', 'cfg', 'conf', 'lock',
    'csv', 'tsv', 'xml', 'html', 'htm', 'svg', 'css', 'scss', 'sass', 'less', 'env', 'log', 'properties', 'mod',
    'sum', '',
))
# languages where one name is defined more than once on purpose (function
# clauses: Erlang, Elixir, Haskell, Elm; overloads: JVM, .NET, Swift, C++;
# multiple dispatch: Julia, Lisps): there a definition is written twice
# only when its whole line is
OVERLOADED = frozenset((
    'erl', 'hrl', 'ex', 'exs', 'hs', 'elm', 'java', 'kt', 'kts', 'cs', 'swift', 'scala', 'sc', 'dart', 'groovy',
    'cc', 'cpp', 'cxx', 'hpp', 'hh', 'hxx', 'mm', 'cu', 'fs', 'fsi', 'v', 'sv', 'sql', 'tf', 'hcl', 'm', 'jl',
    'clj', 'cljs', 'cljc', 'lisp', 'el', 'rkt', 'scm',
))
# languages whose blocks end by a keyword, not by indentation, and whose
# headers span lines (a Verilog port list, SQL's RETURNS ... AS, COBOL's
# areas): the nearest definition above a line encloses it
FLAT = frozenset(('v', 'sv', 'svh', 'vh', 'vhd', 'vhdl', 'sql', 'cob', 'cbl', 'cpy'))
_COMPILED: dict[str, list[re.Pattern[str]]] = {}


def patterns(ext: str) -> list[re.Pattern[str]]:
    """The compiled definition patterns of a file extension (without its
    dot; case as written, then lowercased), compiled on first use."""
    if ext not in _COMPILED:
        table = PATTERNS.get(ext) or PATTERNS.get(ext.lower())
        if table is None:
            table = () if ext.lower() in NONE else GENERIC
        _COMPILED[ext] = [re.compile(p) for p in table]
    return _COMPILED[ext]


def name(m: re.Match[str]) -> str:
    """The definition a pattern's match names: group 1, qualified by the
    other groups that matched (`aws_s3_bucket.logs`)."""
    return '.'.join(g.strip("'") for g in m.groups() if g)


def opens(line: str, ext: str) -> str | None:
    """The name of the definition `line` opens, or None."""
    for p in patterns(ext):
        m = p.match(line)
        if m and m[1]:
            return name(m)
    return None
