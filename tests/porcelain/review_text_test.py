"""The review summary's Markdown, for a pull request comment."""
from __future__ import annotations

from agitmem.porcelain import review_text


def test_markdown_cuts_a_huge_diff_and_fences_backticks() -> None:
    summary = {
        'range': 'a..b', 'code_commits': 1,
        'tattoo': {'added': ['x <b>'], 'removed': []},
        'decisions': {'added': [], 'removed': []},
        'progress': {
            'goal': None, 'goal_before': None, 'next_intent': None,
            'step_before': None, 'step': None, 'done_added': [],
            'verification': None,
        },
        'fragments': [], 'archived': [], 'elsewhere': [],
        'commits': [{'id': 'f' * 40, 'subject': 's', 'event': 'save',
                     'code_branch': 'b', 'code_head': 'e' * 40}],
        'diff': '+```\n' + '+line\n' * 100,
    }
    md = review_text.render_markdown(summary, max_diff=100)
    assert '- **added:** x &lt;b>\n' in md
    assert '````diff\n' in md
    assert '_(diff cut at 100 characters; run `agitmem review a..b` for all of it)_' in md
    assert md.count('+line') < 20
