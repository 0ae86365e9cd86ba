"""Build a third fresh, held-out part of the secrets corpus (fresh3.jsonl).

    python tests/corpus/secrets/extract_fresh3.py KINGFISHER_GITDIR DETECT_SECRETS_GITDIR

was run on bare snapshots (the `fetch` tool's git dirs) of mongodb/kingfisher
ee7c0db3ef87 and Yelp/detect-secrets 5e141933554a.  It reads their HEAD with
`git show` (nothing is executed: detect-secrets' Python tests are read with
`ast` and a small evaluator of string literals, `.format`, `+`, slices and
module constants), writes `fresh3.jsonl` beside this file and prints the
counts and drops (FRESH3.md has them).  The labels are the authors' own:

- kingfisher (`data/rules/*.yml`): a rule's `examples` are `secret`, its
  `negative_examples` `benign` (family `kingfisher:<rule id>`).  The
  examples of a rule whose *name* says it matches an identifier or a public
  value (ID, domain, host, URL, user name, e-mail, account or organisation
  name, public key) are left out, as fresh.jsonl leaves out Nosey Parker's
  non-secret rules; AWS access key ids stay, as in fresh2.jsonl.  Kingfisher's
  `categories` are not used: they are missing on most rules and call a
  GitHub token an `identifier`.
- detect-secrets (`tests/plugins/*_test.py`): a `pytest.mark.parametrize`
  table whose names are `<text>, should_flag` gives `secret` for True and
  `benign` for False; the keyword plugin's `*_TEST_CASES` lists
  `(line, expected)` give `secret` when a value is expected and `benign`
  for None (family `detect-secrets:<test file>`).  An entry the evaluator
  cannot read is counted as a drop.

All: the text is kept as written; left out are texts over 400 characters,
texts already in peers.jsonl, fresh.jsonl, fresh2.jsonl or ordinary.jsonl,
positives of identifier rules, benign texts without a letter or digit and
texts both labels claim; (text, label) is deduplicated.  The scanner
(agitmem/secrets.py, secret_rules*) was neither read nor run to build this.
"""
from __future__ import annotations

import ast
import collections
import re
import sys
from collections.abc import Iterator
from typing import Any

import yaml

# this file's directory is on sys.path when it runs: fresh2's readers and writer
from extract_fresh2 import _git
from extract_fresh2 import _record
from extract_fresh2 import _show
from extract_fresh2 import write_part


KINGFISHER_RULES = 'data/rules/'
# a rule named for an identifier or a public value: its examples are no secret
IDENTIFIER_NAME = re.compile(
    r'\b(?:ID|Id|Domain|Host|URL|Url|Username|User ?name|Email|Name|'
    r'Identifier|Public Key|PUBLIC Key|Instance)\b',
)
KEPT_IDENTIFIERS = frozenset(('kingfisher.aws.1',))  # AWS key ids pair with a secret

DS_TESTS = 'tests/plugins/'


def _ls(gitdir: str, under: str) -> list[str]:
    out = _git(gitdir, 'ls-tree', '-r', '-z', '--name-only', 'HEAD', under)
    return sorted(p for p in out.decode().split('\0') if p)


# --- kingfisher ------------------------------------------------------------

def kingfisher(gitdir: str, drops: collections.Counter[str]) -> Iterator[dict[str, Any]]:
    commit = _git(gitdir, 'rev-parse', 'HEAD').decode().strip()
    for path in _ls(gitdir, KINGFISHER_RULES):
        if not path.endswith(('.yml', '.yaml')):
            continue
        doc = yaml.safe_load(_show(gitdir, path)) or {}
        for rule in doc.get('rules') or ():
            rid, name = rule['id'], rule['name']
            ident = bool(IDENTIFIER_NAME.search(name)) and rid not in KEPT_IDENTIFIERS
            for key, label in (('examples', 'secret'), ('negative_examples', 'benign')):
                for i, text in enumerate(rule.get(key) or ()):
                    if not isinstance(text, str):
                        drops['kingfisher: example not a string'] += 1
                        continue
                    text = text.rstrip('\n')
                    if label == 'secret' and ident:
                        drops['kingfisher: positive of an identifier or public-value rule'] += 1
                        continue
                    yield _record(
                        text, label, f'kingfisher:{rid}', 'kingfisher',
                        'mongodb/kingfisher', commit, path, f'{rid} {key}[{i}]',
                    )


# --- detect-secrets --------------------------------------------------------

class Unreadable(Exception):
    """An expression the small evaluator does not read."""


def _eval(node: ast.expr, names: dict[str, Any]) -> Any:
    """Literals, names bound to them, `+`, `*`, `.format`, slices, dedent."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return [_eval(e, names) for e in node.elts]
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise Unreadable(node.id)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
            and node.value.id == 'self' and f'self.{node.attr}' in names:
        return names[f'self.{node.attr}']
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _eval(node.left, names), _eval(node.right, names)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        raise Unreadable('+')
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _eval(node.left, names), _eval(node.right, names)
        if isinstance(left, str) and isinstance(right, int) and right <= 1000:
            return left * right
        raise Unreadable('*')
    if isinstance(node, ast.Subscript):
        value = _eval(node.value, names)
        sl = node.slice
        if isinstance(value, str) and isinstance(sl, ast.Slice):
            lo = _eval(sl.lower, names) if sl.lower else None
            hi = _eval(sl.upper, names) if sl.upper else None
            return value[lo:hi]
        raise Unreadable('subscript')
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and v.format_spec is None and v.conversion == -1:
                parts.append(str(_eval(v.value, names)))
            else:
                raise Unreadable('f-string')
        return ''.join(parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == 'format' and all(k.arg for k in node.keywords):
            template = _eval(node.func.value, names)
            args = [_eval(a, names) for a in node.args]
            kwargs = {str(k.arg): _eval(k.value, names) for k in node.keywords}
            if isinstance(template, str) and all(
                    isinstance(a, str) for a in (*args, *kwargs.values())):
                return template.format(*args, **kwargs)
        if node.func.attr == 'dedent' and len(node.args) == 1:
            import textwrap
            value = _eval(node.args[0], names)
            if isinstance(value, str):
                return textwrap.dedent(value)
    raise Unreadable(type(node).__name__)


def _constants(tree: ast.Module) -> dict[str, Any]:
    """Module and class level `NAME = <readable>` (and `self.x =` in setup)."""
    names: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            key = target.id if isinstance(target, ast.Name) else (
                f'self.{target.attr}' if isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name) and target.value.id == 'self'
                else None
            )
            if key is None:
                continue
            try:
                names[key] = _eval(node.value, names)
            except (Unreadable, TypeError, ValueError, IndexError, KeyError):
                pass
    return names


def _entries(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else []


def _ds_tables(tree: ast.Module) -> Iterator[tuple[str, int, ast.expr, ast.expr]]:
    """(kind, line, text expr, label expr) of the labelled tables."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == 'parametrize' and len(node.args) >= 2 \
                and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            argnames = [a.strip() for a in node.args[0].value.split(',')]
            if len(argnames) == 2 and argnames[1] == 'should_flag':
                for el in _entries(node.args[1]):
                    if isinstance(el, ast.Tuple) and len(el.elts) == 2:
                        yield 'should_flag', el.lineno, el.elts[0], el.elts[1]
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.endswith('_TEST_CASES'):
            for el in _entries(node.value):
                if isinstance(el, ast.Tuple) and len(el.elts) == 2:
                    yield 'expected', el.lineno, el.elts[0], el.elts[1]


def detect_secrets(gitdir: str, drops: collections.Counter[str]) -> Iterator[dict[str, Any]]:
    commit = _git(gitdir, 'rev-parse', 'HEAD').decode().strip()
    for path in _ls(gitdir, DS_TESTS):
        if not path.endswith('_test.py'):
            continue
        tree = ast.parse(_show(gitdir, path))
        names = _constants(tree)
        family = 'detect-secrets:' + path.rsplit('/', 1)[1].removesuffix('_test.py')
        for kind, line, text_node, label_node in _ds_tables(tree):
            try:
                text, want = _eval(text_node, names), _eval(label_node, names)
            except (Unreadable, TypeError, ValueError, IndexError, KeyError):
                drops['detect-secrets: entry the evaluator cannot read'] += 1
                continue
            if not isinstance(text, str):
                drops['detect-secrets: entry the evaluator cannot read'] += 1
                continue
            if kind == 'should_flag':
                if not isinstance(want, bool):
                    drops['detect-secrets: entry the evaluator cannot read'] += 1
                    continue
                label = 'secret' if want else 'benign'
            else:
                label = 'benign' if want is None else 'secret'
            yield _record(
                text, label, family, 'detect-secrets', 'Yelp/detect-secrets',
                commit, path, f'line {line} ({kind})',
            )


def main(argv: list[str]) -> int:
    drops: collections.Counter[str] = collections.Counter()
    cases = [*kingfisher(argv[1], drops), *detect_secrets(argv[2], drops)]
    before = ('peers.jsonl', 'fresh.jsonl', 'fresh2.jsonl', 'ordinary.jsonl')
    write_part('fresh3.jsonl', cases, before, drops, 'text')
    return 0

if __name__ == '__main__':
    raise SystemExit(main(sys.argv))
