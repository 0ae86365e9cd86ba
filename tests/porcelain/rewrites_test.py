"""The old -> new ids of rewritten commits: git's list on stdin, the records
in memory commit messages, and following them."""
from __future__ import annotations

from agitmem.porcelain import rewrites

A, B, C, D = ('a' * 40, 'b' * 40, 'c' * 40, 'd' * 64)


def test_parse_takes_git_lines_and_skips_the_rest() -> None:
    stdin = f'{A} {B}\n{B} {C} extra\n\nnot ids\n{A[:12]} {B}\n{A}\t{B}\n{C} {D}\n'
    assert rewrites.parse(stdin) == [(A, B), (B, C), (C, D)]


def test_mappings_from_messages_many_to_one() -> None:
    msgs = [
        f'hook post-rewrite: rebase\n\nCode-Rewritten: {A} {C}\nCode-Rewritten: {B} {C}\n\nCode-Head: {C}\n',
        f'save: x\n\n  Code-Rewritten: {A} {D}\nCode-Head: {A}\n',  # not at a line's start
    ]
    assert rewrites.mappings(msgs) == {A: {C}, B: {C}}


def test_followed_goes_through_chains_and_ends_a_cycle() -> None:
    assert rewrites.followed(A, {A: {B}, B: {C}}) == {A, B, C}
    assert rewrites.followed(A, {A: {B}, B: {A}}) == {A, B}  # forged, or undone
    assert rewrites.followed(D, {A: {B}}) == {D}
