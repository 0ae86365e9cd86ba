"""What the injection after a compaction must say before anything else,
read from the user's last request and the client's summary (issue 38's
real failures): the user asked the agent to wait for their decision, and
the summary calls a step pending that the memory records as done.

Pure functions over text: no git, no files."""
from __future__ import annotations

import re

# "wait for my go-ahead", "don't do anything until I confirm", "ask me
# before", in English, Chinese and a few other languages; each pattern
# matches the request itself, the negations below are tested first
_OBJECT = (
    r'(?:go[- ]?ahead|approval|confirmation|decision|ok(?:ay)?|sign[- ]?off|'
    r'green[- ]light|review|answer|reply|input|permission|say[- ]?so)'
)
_ASK = [
    rf'\bwait\b[^.!?\n]{{0,40}}\b(?:for|on)\s+(?:my|our|the\s+user\'?s?)\s+{_OBJECT}',
    r'\bwait\s+(?:until|till|for)\s+(?:i|we)\b',
    r'\b(?:don\'?t|do\s+not|never)\s+(?:do|make|change|touch|start|proceed|continue|run|commit|push|'
    r'edit|go\s+ahead|act|implement|delete|merge)\b[^.!?\n]{0,60}\b(?:until|till|before|without)\s+'
    r'(?:i|we|my|our|you\s+(?:ask|check\s+with|hear\s+from)\s+(?:me|us))\b',
    r'\b(?:ask|check\s+with|confirm\s+with|consult)\s+(?:me|us)\s+(?:first|before)\b',
    r'\bget\s+my\s+(?:approval|ok|go[- ]?ahead|sign[- ]?off)\b',
    r'\bhold\s+off\b[^.!?\n]{0,40}\b(?:until|till)\b',
    r'\b(?:let\s+me|i\'?ll|i\s+will|i\s+want\s+to|i\s+need\s+to)\s+(?:decide|confirm|review|approve)\s+'
    r'(?:first|before)\b',
    # Chinese
    r'等我(?:确认|确定|同意|批准|决定|回复|看过|审核|点头|通知)',
    r'(?:我|在我)(?:确认|同意|批准|决定)(?:之前|以前|前)',
    r'先(?:问|问问|请示)我',
    r'先别(?:动|改|做|提交)',
    # Japanese
    r'(?:私の|僕の)?(?:確認|承認|返事|指示)を待って',
    r'(?:確認|承認)する?まで(?:待って|何もしない|触らない)',
    # Spanish, French, German, Portuguese
    r'\bespera\s+(?:a\s+)?(?:mi|que\s+(?:yo\s+)?(?:confirme|apruebe|decida))',
    r'\bno\s+hagas\s+nada\s+hasta\s+que',
    r'\battends?\s+(?:ma|mon|que\s+je)\s*(?:confirmation|accord|validation|feu\s+vert|valide|confirme|décide)?',
    r'\bne\s+fais\s+rien\s+(?:avant|tant)\s+que',
    r'\bdemande[- ]moi\s+avant\b',
    r'\bwarte\s+auf\s+(?:meine|mein)\s+(?:bestätigung|freigabe|zustimmung|ok|entscheidung)',
    r'\b(?:mach|tu)\s+nichts[^.!?\n]{0,30}\b(?:bevor|bis)\s+ich\b',
    r'\bfrag\s+mich\s+(?:vorher|zuerst|bevor)\b',
    r'\baguarde\s+(?:a\s+)?minha\s+(?:confirmação|aprovação|decisão)',
]
_NOT = [
    r'\b(?:don\'?t|do\s+not|no\s+need\s+to|needn\'?t|without)\s+(?:wait|waiting|ask|asking|check(?:ing)?\s+with)\b',
    r'\b(?:you\s+)?(?:don\'?t|do\s+not)\s+(?:have|need)\s+to\s+(?:wait|ask|check\s+with)\b',
    r'\bno\s+need\s+(?:for|of)\s+my\b',
    r'\bwithout\s+(?:my|our)\s+(?:approval|confirmation|go[- ]?ahead)\b',
    r'\bcontinue\s+without\s+asking\b',
    r'(?:不用|不必|无需|没必要|别|不要)(?:等|问)我',
    r'\bno\s+esperes\b',
    r'\bn\'?attends?\s+pas\b',
    r'\bnicht\s+(?:auf\s+mich\s+)?warten\b',
]
_ASK_RE = re.compile('|'.join(f'(?:{p})' for p in _ASK), re.IGNORECASE)
_NOT_RE = re.compile('|'.join(f'(?:{p})' for p in _NOT), re.IGNORECASE)
# sentences: ends of line, ., !, ?, and the Chinese/Japanese stops
_SENTENCE = re.compile(r'[^.!?\n。！？]+[.!?。！？]?')
WAIT_CHARS = 160  # of the sentence quoted in the WAIT line


def wait_request(text: str) -> str | None:
    """The sentence of text where the user asks the agent to wait for
    their decision before acting, None when none does (a sentence that
    says not to wait, or to go on without asking, does not)."""
    found = None
    for m in _SENTENCE.finditer(text or ''):
        sentence = ' '.join(m.group().split())
        if not sentence or _NOT_RE.search(sentence):
            continue
        if _ASK_RE.search(sentence):
            found = sentence  # the last one said is the one that holds
    if found is None:
        return None
    return found if len(found) <= WAIT_CHARS else found[:WAIT_CHARS - 3] + '...'


# -- a summary a stage behind: what it calls pending, the memory calls done

_PENDING_HEAD = re.compile(
    r'^\s*(?:#+\s*|\d+\.\s*|\*\*)?(?:pending(?:\s+tasks?)?|next\s+steps?|optional\s+next\s+step|'
    r'remaining(?:\s+work)?|to\s*do|todo|still\s+to\s+do|待办|下一步|未完成)\b',
    re.IGNORECASE,
)
_HEAD = re.compile(r'^\s*(?:#+\s+\S|\d+\.\s+\*?\*?[A-Z][^:]*:\s*$|\*\*[^*]+\*\*:?\s*$)')
_PENDING_WORD = re.compile(
    r'\b(?:pending|next(?:\s+step)?|still\s+(?:need|to)|remaining|not\s+yet|to\s+do|todo|'
    r'(?:needs?|has)\s+to\s+be|yet\s+to)\b|待办|还需|尚未|下一步',
    re.IGNORECASE,
)
_WORD = re.compile(r'[^\W_]+')
_STOP = frozenset(
    'a an the to of in on for and or from into with by at is are be it its this that then '
    'done finished completed step'.split(),
)


_SUFFIX = re.compile(r'(?:ing|ed|es|s|e|d)$')


def _words(text: str) -> set[str]:
    """Content words, their endings cut ("deleted" and "delete" match)."""
    words = (w.lower() for w in _WORD.findall(text))
    return {_SUFFIX.sub('', w) if len(w) > 3 else w for w in words if w not in _STOP}


def pending_lines(summary: str) -> list[str]:
    """The lines of a summary that call something pending or next: those
    under a Pending / Next step heading, and any saying pending, next,
    still to do."""
    ret = []
    under = False
    for line in summary.split('\n'):
        if _PENDING_HEAD.match(line):
            under = True
            rest = line.split(':', 1)[1] if ':' in line else ''
            if rest.strip():
                ret.append(rest.strip())
            continue
        if _HEAD.match(line):
            under = False
        if line.strip() and (under or _PENDING_WORD.search(line)):
            ret.append(line.strip())
    return ret


def done_but_pending(summary: str, done: list[str]) -> list[tuple[str, str]]:
    """(done item, the summary's line) for each item the memory records as
    done that a pending line of the summary names: most of the item's
    words (two at least) are in that line."""
    lines = [(line, _words(line)) for line in pending_lines(summary)]
    ret = []
    for item in done:
        want = _words(item)
        if len(want) < 2:
            continue
        for line, have in lines:
            if len(want & have) >= max(2, -(-len(want) * 2 // 3)):
                ret.append((item, line))
                break
    return ret
