"""What an agent's or a user's words say, in English and Chinese: the one
place for the phrase tables the recovery verdicts read (tests in
tests/memory/phrases_test.py).

- a claim that the tests pass or the work is done (and verified), not
  negated ("not yet", "还没"), not conditional ("once the tests pass",
  "如果测试通过"), not excepted ("all pass except ...");
- a question to the user about what to do, with or without a question
  mark (ASCII or full-width);
- a prompt that only says "go on" (继续): no new request.

The phrasings are the common ones of agents' closing messages after a
compaction and of users' prompts after one."""
from __future__ import annotations

import re

# -- claims ---------------------------------------------------------------------
_EN_CLAIMS = (
    # "all tests pass", "the 12 unit tests passed", "tests now pass"
    r'\b(?:all|the|every|both)\s+(?:\w+\s+){0,2}tests?\s+(?:now\s+|still\s+|all\s+)?pass(?:es|ed)?\b',
    r'\btests?\s+(?:are\s+|now\s+|all\s+)+(?:passing|green)\b',
    r'\btests?\s+pass(?:es|ed)?\b',
    r'\btest\s+suite\s+(?:now\s+)?(?:passes|passed|is\s+green)\b',
    # "the money suite is green", "CI is green"; "USD, JPY and KWD all pass"
    r'\b(?:suite|suites|specs?|ci|pipeline|checks)\s+(?:is|are)\s+(?:now\s+|all\s+)?green\b',
    r'\b(?:all|they|these|those|both)\s+(?:now\s+|all\s+)?pass(?:es|ed)?\b(?!\s+(?:through|to|in|on)\b)',
    # "`npm test -- config` passes", "pytest passes now", "cargo test is green"
    r'`[^`\n]{2,80}`\s+(?:now\s+)?(?:passes|passed|succeeds|succeeded|is\s+green|exits?\s+0)\b',
    (
        r'\b(?:pytest|jest|vitest|mocha|cargo\s+test|go\s+test|npm\s+test|tox|unittest|rspec|ctest|make\s+test)\b'
        r'[^.!?\n]{0,40}?\b(?:passes|passed|succeeds|succeeded|is\s+green|exits?\s+0)\b'
    ),
    r'\b(?:all|everything\s+is|it\'?s|is\s+now|are\s+now)\s+green\b',
    r'\beverything\s+(?:now\s+)?pass(?:es)?\b',
    r'\b\d+\s+passed\b(?![^.\n]*\b[1-9]\d*\s+failed)',
    r'\b(?:no|zero|0)\s+(?:test\s+)?failures\b',
    # "the task is done", "the fix is complete and verified", "all done"
    (
        r'\b(?:task|work|fix|refactor(?:ing)?|migration|port|move|rename|upgrade|update|cleanup|step|change|changes|feature|'
        r'bug|issue|implementation|everything|it|this|that)'
        r'\s+(?:is|are|has\s+been|have\s+been|was)\s+(?:now\s+|all\s+|fully\s+)?'
        r'(?:done|complete|completed|finished|verified|fixed|resolved|working)\b'
    ),
    r'\b(?:complete|done|fixed|finished)\s+and\s+(?:verified|tested)\b',
    r'\ball\s+done\b',
    # "Nothing left to do on this one": nothing remains of the work
    r'\bnothing\s+(?:(?:else|more)\s+)?(?:left|remaining|more)\s+to\s+do\b',
    # "All set: ...", "the change is in place": the work reported as finished
    r'\ball\s+set\b(?!\s+(?:up|to)\b)',
    r'\b(?:fix|change|changes|patch|it|this|that|logic|check|handling)\b[^.!?;:\n]{0,40}?\s(?:is|are)\s+(?:now\s+)?in\s+place\b',
    r'\b(?:i\'?ve|i\s+have)\s+(?:now\s+)?(?:completed|finished|fixed|resolved)\s+(?:the|this|it)\b',
    r'\bverified\s+(?:that\s+)?(?:it|the\s+fix|everything)\s+works\b',
    # "the build succeeds", "it compiles", "lint is clean": a check besides the tests (checks())
    (
        r'\b(?:build|compilation|lint(?:ing)?|type[\s-]?check(?:ing)?|vet|mypy|tsc)\s+(?:now\s+|also\s+)?'
        r'(?:passes|passed|succeeds|succeeded|is\s+(?:green|clean)|works|exits?\s+0)\b'
    ),
    r'\b(?:it|everything|the\s+\w+)\s+(?:now\s+)?(?:builds|compiles)\b',
    # a test named by its identifier or its cases: "RefundServiceTest is green",
    # "the DurationSpec cases (1h30m, 10x) pass now", "test_parse_range passes"
    (
        r'(?:(?-i:\b[A-Za-z]\w*(?:Tests?|Specs?|Suite))|\b\w+_(?:tests?|specs?)|\btest_\w+|\b(?:test\s+)?cases)\b'
        r'(?:\s*\([^)\n]{0,60}\))?\s+(?:(?:now|all|both|are|is|still)\s+)*(?:pass(?:es|ed|ing)?|green)\b'
    ),
    # "both widget tests in rating_bar_test.dart pass now": a few words between,
    # none of them a modal (a plan is not a claim)
    r'\btests?\b(?:(?!\b(?:will|should|would|could|might|may|must|can|to|that|which)\b)(?:[^.!?;:\n]|\.(?=\w))){1,40}?\bpass(?:es|ed)?\s+now\b',
    # a report's headline: "Done.", "Fixed: ...", "Done and committed."
    r'^\W*(?:all\s+)?(?:done|fixed|resolved|completed?|finished|shipped)\b(?=\s*(?:[.:!,\u2014\u2013-]|$|\s+and\b))',
    # "buf breaking is green", "the checked_cast work was already green": any check said green
    # (each begun where its run of [\w./-] begins: begun at every word of a
    # long run, as `\b` alone allows, each scanned the rest of it: 32 KB of
    # "a/a/a..." took seconds; a match inside a run is found from its start)
    r'(?<![\w./-])[./-]*\b[\w./-]+\s+(?:is|are|was|were)\s+(?:now\s+|all\s+|already\s+)?green\b',
    # "Forge is happy", "clippy is happy now": a tool said content with the work
    r'(?<![\w./-])[./-]*\b(?!(?:user|users|customer|client|team|everyone|he|she|they|you|we|i)\b)[\w./-]+\s+(?:is|are|was|were|seems?)\s+(?:now\s+|all\s+|already\s+)?happy\b(?!\s+to\b)',
    # "issue #14 is resolved", "I'd consider SHOP-API-7F resolved"
    r'\b(?:issue|ticket|bug)\s+#?\w+\s+(?:is|was)\s+(?:now\s+)?(?:resolved|fixed|done|closed|complete)\b',
    r'\b(?:consider|call)\s+(?:it|this|that|the\s+\w+|#?[A-Z][\w-]*\d\w*)\s+(?:resolved|fixed|done|closed|complete)\b',
)
_ZH_CLAIMS = (
    r'(?:测试|单测|用例|单元测试|集成测试|所有测试|全部测试|测试用例)[^。！？\n，,;；]{0,8}?(?:都|全部|均|全|已经|已)?(?:通过|跑通|过了|变绿|全绿)',
    r'(?:全部|全都|都)(?:已经?)?通过',
    r'全绿',
    r'跑通了',
    r'(?:任务|工作|修复|重构|迁移|改动|修改|功能|问题|这个|一切)[^。！？\n，,;；]{0,6}?(?:已经|已|都)?(?:完成|搞定|修复|解决|做完)',
    r'(?:已经|已)(?:全部)?(?:完成|修复|解决|搞定|验证)',
    r'验证通过',
    r'修复(?:完成|成功)',
    r'(?:编译|构建|打包|类型检查|静态检查)[^。！？\n，,;；]{0,6}?(?:都|均|也|已经?)?(?:通过|成功)',
    # "go test 已通过", "pytest 全部通过", "npm test 跑通了": a runner named in Latin letters
    (
        r'(?:pytest|jest|vitest|mocha|cargo\s+test|go\s+test|npm\s+test|tox|rspec|ctest|make\s+test|`[^`\n]{2,80}`)'
        r'\s*(?:也|都|全部|均|现在|已经?)*(?:通过|跑通|过了|变绿|全绿|成功)'
    ),
    # "问题修好了", "已经修好", "这个 bug 解决了"
    r'(?:已经?|都)?修好了?',
    # "问题已经处理好了", "都弄好了": the work reported as finished
    r'(?:已经?|都)?(?:处理|弄|搞|改)好了',
    r'(?:问题|bug|缺陷|错误)[^。！？\n，,;；]{0,6}?(?:已经?)?(?:解决|修复|修正)了',
    # "`make migrate-test` 是绿的", "测试绿了", "三个用例都没问题了", "能过了"
    r'(?:测试|单测|用例|`[^`\n]{2,80}`)[^。！？\n，,;；]{0,8}?(?:是绿的|绿了|没问题了?)',
    r'^\W*(?:都|全部?|也)?能过了',
    # "SendInvoiceEmailTest 全部通过": a test named by its identifier
    r'(?-i:[A-Za-z]\w*(?:Tests?|Specs?|Suite)\b|\btest_\w+)[^。！？\n，,;；]{0,8}?(?:都|全部|均|全)?(?:通过|跑通|过了|变绿|全绿)',
)
_CLAIM = re.compile('|'.join(_EN_CLAIMS + _ZH_CLAIMS), re.I)

# a claim these words come before (in its clause) is not made
_EN_NEGATIONS = (
    r'\bnot\b', r'\bnever\b', r'\bno\s+longer\b', r'\bnone\b', r"n't\b", r'\bno\b', r'\bfail\w*',
    r'\bnor\b', r'\bwithout\b', r'\bneither\b',
)
_ZH_NEGATIONS = (r'没', r'未', r'不', r'尚', r'失败', r'无法', r'别')
_NEGATED = re.compile('|'.join(_EN_NEGATIONS + _ZH_NEGATIONS), re.I)
_ZH_NEGATED = re.compile('|'.join(_ZH_NEGATIONS))
# a claim after these is a condition or a plan, not a claim
_EN_CONDITIONS = (
    r'\bif\b', r'\bonce\b', r'\bwhen\b', r'\buntil\b', r'\bso\s+that\b', r'\bmake\s+sure\b', r'\bensure\b',
    r'\bto\s+make\b', r'\bshould\b', r'\bwill\b', r"\b\w+'ll\b", r'\bneeds?\s+to\b', r'\bwhether\b',
    r'\bcheck\b', r'\bverify\b', r'\bconfirm\b', r'\bexpect\w*\b', r'\bhope\w*\b',
    r'\bwould\b', r'\bcould\b', r'\bmight\b', r'\bmay\b', r'\bunless\b', r'\bgoing\s+to\b', r'\bnext\b',
)
_ZH_CONDITIONS = (
    r'如果', r'若', r'等', r'直到', r'确保', r'以便', r'需要', r'之后', r'以后', r'再', r'会', r'看看', r'是否',
    r'检查(?!通过)', r'确认', r'让', r'使', r'期望', r'希望', r'应该', r'要', r'待', r'能否', r'下一步',
)
_CONDITIONAL = re.compile('|'.join(_EN_CONDITIONS), re.I)
# a Chinese condition holds within its comma's part ("已加上检查，问题解决了"
# claims it solved), unless it opens the sentence ("如果测试通过，就算完成")
_ZH_CONDITIONAL = re.compile('|'.join(_ZH_CONDITIONS))
_ZH_IF = re.compile(r'如果|若|假如|要是|一旦|只要')
# "all tests pass except test_load", "..., but one still fails"
_EXCEPT = re.compile(
    r'\s*[,，]?\s*(?:except|but|apart\s+from|other\s+than|save\s+for|除了|但|但是|不过|只是|除)', re.I,
)
# clauses: a claim and its negation or condition are in one
_CLAUSE = re.compile(r'(?<=[.!?;:\n])\s+|[。！？；;\n]')
_SENTENCE = re.compile(r'(?<=[.!?\n])\s+|(?<=[。！？])')


def claim(text: str) -> str | None:
    """The first sentence of `text` that claims the tests pass or the work
    is done, else None."""
    found = claims(text)
    return found[0] if found else None


# "I have not run the tests", "还没跑测试", "the tests still fail": a
# sentence that says so claims no verification, whatever it says is done
_EN_UNVERIFIED = (
    r"\b(?:not|n't|never)\s+(?:\w+\s+){0,3}?(?:run|ran|tested|verified|re-?run)\b(?!\s+into)",
    r'\b(?:untested|unverified)\b',
    r'\btests?\s+(?:\w+\s+){0,2}?still\s+fail',
    # "passed last run but fails now": the same breath reports a failure
    r'\b(?:but|now|still)\s+(?:\w+\s+){0,2}?fail(?:s|ing)\b|\bfails?\s+now\b',
)
_ZH_UNVERIFIED = (r'(?:没|未|还没)有?(?:跑|运行|执行|测试|测|验证)', r'(?:仍然?|还是|依然)(?:失败|是?红)')
_UNVERIFIED = re.compile('|'.join(_EN_UNVERIFIED + _ZH_UNVERIFIED), re.I)


def claims(text: str) -> list[str]:
    """Every sentence of `text` that claims the tests pass or the work is
    done (or that a check it names passed), in order; not one that says
    in the same breath that nothing verified it ("The fix is in place; I
    have not run the tests")."""
    ret = []
    if open_question(asks(text) or ''):
        # a text that hands the choice back lists options, not results:
        # "1. Implement X so the two new tests pass. ... Which one?"
        text = '\n'.join(line for line in (text or '').splitlines() if not _ITEM.match(line))
    sentences = _SENTENCE.split(text or '')
    for i, sentence in enumerate(sentences):
        # a bare headline ("Done.") is said with the sentence after it
        said = sentence if len(sentence.split()) > 3 else ' '.join(sentences[i:i + 2])
        if _UNVERIFIED.search(said):
            continue
        if any(clause and _claim_in(clause) for clause in _CLAUSE.split(sentence)):
            ret.append(' '.join(sentence.split())[:200])
    return ret


# -- what is not a claim ----------------------------------------------------------------
# After the turn's edits, a closing text is a report that the work is done,
# whatever its words and language, unless it says the work is unfinished or
# unverified: a plan of the agent's own ("I'll run the tests next"), a
# failing or missing result ("the test still fails", "还没跑"), a partial
# result ("13 of 14"). These tables decide only that; what backs a report
# is the turn's runs, not its wording.
_EN_OPEN = (
    # a plan of the agent's own: "I'll", "next I will", "let me", "that's the next step"
    r"\b(?:i|we)(?:'ll|\s+will|\s+am\s+going\s+to|'m\s+going\s+to|\s+(?:still\s+)?(?:need|have)\s+to|'d\s+like\s+to)\b",
    # "next, the imports.", "next: the prefix", "Next step ..."
    r'\bnext\s*[,:;\u2013\u2014]|\bnext\s+(?:step|up|i|we|is)\b|^\W*next\b|\bthe\s+next\s+step\b|\blet\s+me\b|\bto\s+do\s+next\b',
    # unverified: "I have not re-run", "not verified", "untested", "haven't run"
    r"\b(?:not|n't|never)\s+(?:\w+\s+){0,3}?(?:run|ran|tested|verified|re-?run|checked|finished|done|complete)\b",
    r'\bnot\s+yet\b|\b(?:untested|unverified)\b',
    # a failing result: "still fails", "the two tests still fail", "3 failed", "still red"
    r'\bstill\s+(?:\w+\s+){0,3}?(?:fail\w*|red|broken|open|pending|missing|to\s+do|left)\b',
    r'\b(?:one|two|three|a|[1-9]\d*)\s+(?:\w+\s+)?(?:failures?|failing|errors?)\b',
    r'\b(?:tests?|specs?|cases?|suites?|run|build|ci|check|it|they|one|assertion)\b[^.;!?\n]{0,40}?\b(?:fails?|failing|failed|is\s+red|are\s+red|errors?\s+out)\b',
    r'\b[1-9]\d*\s+(?:tests?\s+)?failed\b',
    r'\b(?:remaining|remains|left\s+to\s+do|pending|partial(?:ly)?|half\s+of|only\s+part)\b',
    # a progress note: "Continuing in load_config.", "still working on it"
    r'\b(?:continuing|working\s+on|in\s+progress|carrying\s+on|proceeding\s+with)\b',
)
_ZH_OPEN = (
    r'下一步|接下来|稍后|待会|然后(?:再|我)|我(?:再|会|先|去|来)|再(?:跑|运行|执行|测)|还差|还需要?|剩下|待办|继续|正在|进行中',
    r'(?:没|未|还没|尚未)有?(?:跑|运行|执行|测试|测|验证|完成|通过|过)',
    r'(?:仍然?|还是|依然|依旧)[^。！？\n]{0,6}?(?:失败|是?红|报错|不过)',
    r'(?:测试|用例|单测)[^。！？\n，,]{0,10}?(?:失败|报错|挂了|红)',
)
# French, German, Spanish, Portuguese, Japanese, Korean: the same few kinds
_OTHER_OPEN = (
    r'\bpas\s+encore\b|\béchou\w*|\btoujours\s+rouges?\b|\bje\s+vais\b|\bensuite\s+je\b|\bprochaine\s+étape\b',
    r'\bnoch\s+nicht\b|\bschlägt\b[^.]{0,30}\bfehl\b|\bfehlgeschlagen\b|\bich\s+werde\b|\bals\s+nächstes\b',
    r'\btodavía\s+no\b|\baún\s+no\b|\bfallan?\b|\bvoy\s+a\b|\bsiguiente\s+paso\b',
    r'\bainda\s+não\b|\bfalh(?:a|am|ou)\b|\bvou\s+\w+|\bpróximo\s+passo\b',
    r'まだ|失敗|次に|これから|未実行|未確認',
    r'아직|실패|다음(?:에|으로)|할\s*예정',
)
_OPEN = re.compile('|'.join(_EN_OPEN + _ZH_OPEN + _OTHER_OPEN), re.I | re.M)


def unfinished(text: str) -> str | None:
    """The first sentence of `text` that says the work is not finished or
    not verified (a plan, a failing or missing result, a partial one), or
    None."""
    for sentence in _SENTENCE.split(text or ''):
        if _OPEN.search(sentence) or _partial(sentence):
            return ' '.join(sentence.split())[:200]
    return None


def reported(text: str) -> str | None:
    """The closing text, when it reports the work done: any text that is
    not empty, does not end by asking the user, and says nothing of the
    work being unfinished or unverified (unfinished()); its first sentence,
    else None.  A report in words no table holds is a report."""
    said = (text or '').strip()
    if not said or asks(said) or unfinished(said):
        return None
    first = next((s for s in _SENTENCE.split(said) if s.strip()), said)
    return ' '.join(first.split())[:200]


# -- what an agent's closing text reports it did ---------------------------------------
# a clause with these plans or recalls: it is not a report of the turn's own work
_EN_PLANS = (
    r'\bnext\b', r'\bthen\b', r'\bafterwards?\b', r'\bafter\s+that\b', r'\blater\b', r'\bwill\b', r"\b\w+'ll\b",
    r'\bgoing\s+to\b', r'\bremain\w*\b', r'\bstill\s+(?:need|to\s+do|missing|left)\b',
)
_ZH_PLANS = (r'下一步', r'接下来', r'然后', r'之后', r'稍后', r'待会', r'再', r'还差', r'还需要?', r'剩下')
_EN_RECALLS = (
    r'\balready\b', r'\bpreviously\b', r'\bearlier\b', r'\bbefore\s+the\s+(?:compaction|summary)\b',
    r'\bin\s+the\s+(?:last|previous)\b', r'\bwas\s+done\b',
)
_ZH_RECALLS = (r'已经', r'之前', r'此前', r'上次', r'先前', r'早已', r'刚才')
_NOT_REPORT = re.compile('|'.join(_EN_PLANS + _ZH_PLANS + _EN_RECALLS + _ZH_RECALLS), re.IGNORECASE)


def reports(text: str) -> list[str]:
    """The clauses of `text` that report the turn's own work: not a plan
    ("next", "then", "下一步", "再"), not a recollection of earlier work
    ("already", "之前", "已经"), not a question."""
    ret = []
    for sentence in _SENTENCE.split(text or ''):
        for clause in _CLAUSE.split(sentence):
            clause = clause.strip()
            if _NOT_REPORT.search(clause) or _QUESTION_END.search(clause):
                break  # "Next: the prefix.": what follows in the sentence is the plan's
            if clause:
                ret.append(clause)
    return ret


# -- what a claim is about: the tests, or another check it names -------------------------
# "the build passes", "编译和 vet 都通过": a claim about a check that is not the
# tests; the turn's run of that check backs it
_CHECKS = {
    'build': r'\b(?:build|builds|built|compiles?|compiled|compilation)\b|编译|构建|打包',
    'lint': (
        r'\b(?:lint|linter|linting|vet|type[\s-]?checks?|typecheck\w*|mypy|tsc|ruff|eslint|clippy|flake8|pylint)\b'
        r'|静态检查|类型检查|代码检查'
    ),
}
_TESTS = re.compile(r'\b(?:tests?|specs?|suites?|pytest|jest|vitest|mocha|rspec|ctest|tox)\b|测试|单测|用例|验证|verif', re.IGNORECASE)


# what a check does when it passes: "the build passes", "it compiles", "编译通过"
_PASSES = (
    r'[^.。!！?？\n]{0,24}?(?:\b(?:pass\w*|succeed\w*|green|clean|works|exits?\s+0|ok)\b|通过|成功|没有?(?:报错|错误))'
)


def about_tests(text: str) -> bool:
    """`text` speaks of the tests (or of verifying): "all tests pass",
    "verified", "测试通过"; not a bare "Done." or "All set."."""
    return bool(_TESTS.search(text or '')) or bool(re.search(r'\bgreen\b|\bpass(?:es|ed|ing)?\b|通过|跑通|绿', text or '', re.I))


# "verified on both the settings page and the editor", "checked it by hand",
# "confirmed in the browser", "手动验证过": a check by looking, not a test run
_BY_HAND = re.compile(
    r'\b(?:verified|checked|confirmed|tested|validated|measured)\b[^.!?;\n]{0,40}?(?:\b(?:by\s+hand|by\s+eye|manually|visually)\b'
    r'|\b(?:in|on|with)\s+(?:the\s+|a\s+)?(?:browser|ui|preview|emulator|simulator|devtools|device|screenshots?|running\s+app)\b'
    r'|\bon\s+(?:both\s+|each\s+|every\s+)?(?:of\s+)?(?:the\s+|a\s+)?[\w-]+(?:\s+[\w-]+){0,2}?\s+(?:page|pages|screen|screens|site|view|views)\b)'
    r'|\b(?:manually|by\s+hand|visually)\s+(?:verified|checked|confirmed|tested)\b'
    r'|手动(?:验证|测试|检查|确认)|(?:在)?浏览器(?:里|中)?(?:验证|确认|检查|看)',
    re.IGNORECASE,
)
_TEST_RUNS = re.compile(r'\b(?:tests?|specs?|suites?|pytest|jest|vitest|mocha|rspec|ctest|tox)\b|测试(?!过)|单测|用例', re.IGNORECASE)


def by_hand(text: str) -> bool:
    """`text` says the work was checked by looking at it (on a page, in the
    browser, by hand), and names no test: a check the turn's test runs
    neither back nor belie."""
    return bool(_BY_HAND.search(text or '')) and not _TEST_RUNS.search(text or '')


def checks(text: str) -> set[str]:
    """The checks other than the tests that `text` says passed (build,
    lint): "编译和 vet 都通过", "the build succeeds", "it compiles"; empty
    when it names the tests ("the build and the tests pass"), or names a
    check without saying it passed ("the build script is done")."""
    if _TESTS.search(text or ''):
        return set()
    return {
        kind for kind, pattern in _CHECKS.items()
        if re.search(f'(?:{pattern}){_PASSES}', text or '', re.IGNORECASE)
        or kind == 'build' and re.search(r'\b(?:builds|compiles)\b', text or '', re.IGNORECASE)
    }


# "13 of 14 tests pass", "4/5 passing", "14 个用例中 13 个通过": an honest
# partial result, not a claim that the tests pass
_PARTIAL = re.compile(r'(\d+)\s*(?:of|out\s+of|/)\s*(\d+)\b|(\d+)\s*个?[^。！？\n，,;；\d]{0,6}中\s*(\d+)', re.I)


def _partial(clause: str) -> bool:
    for m in _PARTIAL.finditer(clause):
        done, total = (int(m[1]), int(m[2])) if m[1] else (int(m[4]), int(m[3]))
        if done < total:
            return True
    return False


def _claim_in(clause: str) -> bool:
    if _partial(clause):
        return False
    for m in _CLAIM.finditer(clause):
        before, after = clause[:m.start()], clause[m.end():]
        # a negation before a comma is another part's: "the failure is in
        # the test, not the parser, so the feature is done" claims it done
        near = re.split(r'[,，、]', before)[-1]
        if _NEGATED.search(near[-25:]) or _ZH_NEGATED.search(m[0].replace('没问题', '')) or _NEGATED.match(after.lstrip()[:8]):
            continue
        if re.search(r'\b(?:yet)\b|还没|仍|依然|still\s+fail', after[:20], re.I):
            continue
        if _CONDITIONAL.search(before[-40:]) or _ZH_CONDITIONAL.search(near[-20:]) or _ZH_IF.search(before):
            continue
        if _EXCEPT.match(after):
            continue
        return True
    return False


# -- asking the user -----------------------------------------------------------------
_EN_ASKS = (
    r'\bwhat\s+(?:would|do)\s+you\s+(?:like|want)\b',
    r'\bwhat\s+should\s+(?:i|we)\b',
    r'\bwhat\s+(?:do|shall|would)\s+(?:i|we)\s+do\b',
    r'\bhow\s+(?:would|do)\s+you\s+(?:like|want)\b',
    r'\bhow\s+(?:should|shall|do)\s+(?:i|we)\s+(?:proceed|continue|go\s+on)\b',
    r'\b(?:let\s+me\s+know|tell\s+me|please\s+advise|advise\s+me)\b',
    r'\b(?:could|can|would)\s+you\s+(?:please\s+)?(?:clarify|tell\s+me|remind\s+me|confirm|point\s+me|share|explain\s+what)\b',
    r'\bwhich\s+(?:task|file|part|one|function|item|step|of\s+these|of\s+them|direction|option)\b',
    r'\bwhat\s+(?:are|were)\s+we\s+(?:working\s+on|doing)\b',
    r'\bwhere\s+(?:were|are)\s+we\b',
    r'\bwhere\s+(?:did|should)\s+(?:we|i)\s+(?:leave|left|pick)\b',
    r'\bi\s+(?:don\'t|do\s+not)\s+(?:know|have\s+(?:the\s+)?(?:context|enough))\b',
    r'\bi(?:\'?m|\s+am)\s+not\s+sure\s+(?:what|where|which|how)\b',
    r'\bwhere\s+(?:we|i)\s+left\s+off\b',
    r'\b(?:lost|losing)\s+(?:track|context)\b',
    r'\b(?:waiting|wait)\s+for\s+(?:your\s+)?(?:instructions|direction|input|guidance)\b',
    r'\bawaiting\s+(?:your\s+)?(?:instructions|direction|input|guidance)\b',
    r'\bneed\s+(?:more\s+)?(?:context|guidance|direction|instructions)\b',
    r'\bhow\s+to\s+proceed\b',
    r'\bwhat\s+(?:to\s+do|next)\b',
    r'\b(?:before\s+i|should\s+i)\s+(?:continue|proceed|go\s+on)\b',
    r"\bwhat(?:'s|\s+is)\s+(?:the\s+|my\s+|our\s+)?next\b",
    # a choice between works handed to the user: "Do you want me to look into
    # that failure, or is there something else ...?"
    r'\bor\s+(?:is\s+there\s+)?(?:something|anything)\s+else\b',
    r',\s*or\b[^.!?\n]{0,160}\?',
    # options listed, then "Which would you like me to start with?"
    r'\bwhich\s+(?:would|do|should|shall)\s+(?:you|i|we)\b',
)
_ZH_ASKS = (
    r'(?:你|您)[^。！？\n]{0,4}?(?:想|希望|需要|要)(?:让我|我)?[^。！？\n]{0,4}?(?:什么|哪)',
    # "是继续完善解析，还是先补比较逻辑？": options for the user to choose from
    r'还是[^。！？\n]{0,60}[？?]',
    r'(?:你|您)(?:希望|想要?)我(?:怎么|如何)',
    r'需要我(?:做|干|处理)?(?:什么|哪)',
    r'(?:接下来|下一步|然后)(?:要|该|应该|需要)?(?:做|干)?(?:什么|哪)',
    r'请(?:告诉|指示|明确|说明|确认|指出|提供)',
    r'告诉我(?:要|该|应该)?',
    r'我们(?:之前|刚才|现在)?(?:在|正在)(?:做|干)什么',
    r'(?:怎么|如何)(?:继续|进行|处理|推进|往下)',
    r'(?:不清楚|不确定|不太确定|不知道)(?:当前|之前|现在|要|该|你|我们|从哪)',
    r'(?:是否|要不要|需不需要)(?:继续|让我)',
    r'(?:哪个|哪一个|哪项|哪部分)(?:任务|文件|部分)?',
    r'等待(?:你的|您的)?(?:指示|确认|说明)',
)
# French, German, Spanish: "what should I (change next)?", "which do you
# prefer?", "where do I start?": the choice of work asked of the user
_OTHER_ASKS = (
    r'\bque\s+(?:dois|devrais|veux|puis)-je\b',
    r"\bqu['’]est-ce\s+que\s+(?:je|tu|vous)\s+(?:dois|devrais|veux|voulez|souhaitez)\b",
    r'\bpar\s+(?:quoi|où|lequel|laquelle)\s+(?:je\s+)?(?:commence|dois-je|veux-tu|voulez-vous)\b',
    r'\b(?:lequel|laquelle|lesquel(?:le)?s)\b[^.?!\n]{0,60}\b(?:préf[èé]re[sz]?|veux|voulez|souhaites?|souhaitez)\b',
    r'\b(?:was|womit|wo)\s+soll(?:en|te|ten)?\s+(?:ich|wir)\b', r'\bwie\s+soll(?:en)?\s+(?:ich|wir)\s+weiter',
    r'\bwelche[nsrm]?\b[^.?!\n]{0,60}\b(?:soll(?:en)?\s+(?:ich|wir)|möchtest|willst|möchten\s+sie)\b',
    r'\bqué\s+(?:debo|debería|hago|hacemos|quieres\s+que|prefieres\s+que)\b',
    r'\bpor\s+(?:dónde|donde|cuál|cual)\s+(?:empiezo|empezamos|sigo|seguimos|continúo|continuamos)\b',
    r'\bcuál\b[^.?!\n]{0,60}\b(?:prefieres|quieres|debo|hago)\b', r'\bcómo\s+(?:sigo|seguimos|continúo|procedo)\b',
)
# the choice of work left to the user, without a question: "your call",
# "先等你的指示", "Dis-moi ce que tu veux", "sag mir, was du willst"
_DEFERS = (
    r'\byour\s+(?:call|choice|decision|pick)\b', r'\bup\s+to\s+you\b', r'\byou\s+(?:decide|choose|pick)\b',
    r'\bwhatever\s+you\s+(?:want|prefer|need|had\s+me|like)\b',
    # "happy to go whichever way you prefer", "either way you like", "I'll hold off until you say"
    r'\b(?:whichever|either|any)\s+(?:way|one|option|direction)?\s*you\s+(?:prefer|want|like|choose|decide|say)\b',
    r'\bhold\s+off\s+(?:until|till|for)\s+(?:you|your)\b',
    r'等(?:待)?(?:你|您)的?(?:指示|确认|说明|安排|吩咐|决定|意见)', r'(?:你|您)(?:来)?(?:定|决定)吧?', r'听(?:你|您)的',
    r'\b(?:dis|dites)-moi\b', r'\bce\s+que\s+(?:tu|vous)\s+(?:veux|voulez|souhaites?|souhaitez|préfères|préférez)\b',
    r'\bà\s+(?:toi|vous)\s+de\s+(?:voir|choisir|décider)\b',
    r'\b(?:sag|sagen\s+sie)\s+mir\b', r'\bwas\s+(?:du|sie)\s+(?:willst|möchtest|möchten|wollen)\b',
    r'\b(?:dime|dígame)\b', r'\bqué\s+(?:quieres|prefieres|desea)\b', r'\b(?:tú|usted)\s+decides?\b',
    r'\b(?:me\s+diga|diga-me)\b', r'\bo\s+que\s+(?:você|vc)\s+(?:quer|prefere)\b', r'\bvocê\s+decide\b',
    r'(?:ご?指示)(?:を|が)?(?:ください|お待ち|あれば)', r'教えてください', r'どう(?:しますか|しましょうか)',
    r'알려\s*주세요', r'말씀해\s*주세요', r'어떻게\s*할까요', r'원하시는',
)
# the user asked to say the task again: "¿Me recuerdas qué había que
# hacer?", "rappelle-moi", "提醒我一下要做什么": seed 004's restating
_RESTATE_ASKS = (
    r'\bremind\s+me\b', r'\bwhat\s+(?:was|were)\s+(?:i|we)\s+(?:supposed|meant|going)\s+to\b',
    r'\b(?:me\s+recuerdas|recuérdame|recuerdame)\b', r'\bqu[ée]\s+(?:había|habia|hay)\s+que\s+hacer\b',
    r'\brappelle[sz]?-moi\b', r'\bqu\W?est-ce\s+qu\W?il\s+fallait\b',
    r'\berinner(?:e|n\s+sie)?\s+mich\b', r'\bwas\s+(?:sollte|wollte)\s+(?:ich|wir)\b',
    r'\b(?:me\s+lembra|lembre-me|me\s+lembre)\b', r'\bo\s+que\s+(?:era|havia)\s+(?:pra|para)\s+fazer\b',
    r'提醒(?:我|一下)', r'(?:要|该)(?:做|改)什么来着', r'之前(?:要|让我)(?:做|改)(?:什么|哪)',
    r'何を(?:すれば|する(?:予定|はず)だった|していた)', r'思い出させて',
)
_ASK = re.compile('|'.join(_EN_ASKS + _ZH_ASKS + _OTHER_ASKS + _DEFERS + _RESTATE_ASKS), re.I)
_QUESTION_END = re.compile(r'[?？]\s*[)"\'”」]*\s*$|吗\s*[。.]?\s*$')


def asks(text: str) -> str | None:
    """The closing words of `text` when they ask the user something (what
    to do, or leave to them how to go on), else None."""
    tail = (text or '').strip()[-400:]
    if not tail:
        return None
    sentences = [s for s in _SENTENCE.split(tail) if s.strip()]
    last = ' '.join(sentences[-2:]) if sentences else tail
    if _QUESTION_END.search(tail) or _ASK.search(last):
        return ' '.join(last.split())[-200:]
    return None


def before_question(text: str) -> str:
    """`text` without the sentences that end it by asking the user (its
    closing question, asks()): what it says before it asks."""
    sentences = [s for s in _SENTENCE.split((text or '').strip()) if s.strip()]
    while sentences and (_QUESTION_END.search(sentences[-1][-400:]) or _ASK.search(sentences[-1][-400:])):
        sentences.pop()
    return ' '.join(sentences)


# the agent's own pick among options ("I'd lean toward B", "I recommend the
# second", "我建议用方案二"), then a question whether to go that way ("Want
# to go that direction, or do you have a different instinct?"): a plan put
# to the user with a way out, not the choice of work handed back
_RECOMMENDS = re.compile(
    r"\bI(?:'d|\s+would)\s+(?:lean|go|recommend|suggest|pick|choose|opt|start)\b|\bI\s+(?:recommend|suggest|propose|lean)\b"
    r'|\bmy\s+(?:recommendation|suggestion|preference|pick|vote)\b|我(?:建议|推荐|倾向)',
    re.IGNORECASE,
)
_GO_AHEAD = re.compile(
    r'\b(?:want|like)\s+(?:me\s+)?to\s+(?:go|take|do|start|proceed|implement|try)\b|\b(?:shall|should)\s+I\b'
    r'|\bsound\s+good\b|\b(?:ok|okay|fine)\s+with\s+you\b|\bgo\s+ahead\b|要不要|可以吗|行吗',
    re.IGNORECASE,
)


def proposes(text: str) -> bool:
    """`text` picks one course itself and ends asking whether to take it
    (with or without another way offered): the plan is the agent's."""
    asked = asks(text)
    return bool(asked) and bool(_RECOMMENDS.search((text or '')[-800:])) and bool(_GO_AHEAD.search(asked or ''))


# a next step that is none: "No next step recommended", "no further action
# is needed unless the user asks", "wait for the user's decision",
# "nothing left to do", "无需进一步操作", "等待用户": the work stops there
_NOTHING_NEXT = re.compile(
    r'\bno\s+(?:(?:immediate|further|obvious|pending|recommended)\s+)?next\s+steps?\b'
    r'|\bno\s+(?:further|more|other)\s+(?:action|actions|steps?|work|changes?)\s+(?:is\s+|are\s+)?(?:needed|required|recommended|planned)\b'
    r'|\bnothing\s+(?:(?:else|more)\s+)?(?:left\s+)?to\s+do\b(?!\s+(?:in|on|with|for|about)\b)'
    r"|\b(?:wait|waiting)\s+for\s+(?:the\s+)?user(?:'s)?\b|\bawait(?:ing)?\s+(?:the\s+)?user(?:'s)?\b"
    r'|无需(?:进一步|其他|更多)|没有下一步|(?:等待|等)用户',
    re.IGNORECASE,
)


def nothing_next(text: str) -> str | None:
    """The sentence of a next step that says there is none (the work is
    finished, or waits for the user), else None."""
    for sentence in _SENTENCE.split(text or ''):
        if _NOTHING_NEXT.search(sentence):
            return ' '.join(sentence.split())[:160]
    return None


def open_question(text: str) -> bool:
    """`text` asks what to do (not leave to the user a plan it states)."""
    return bool(_ASK.search(text or ''))


# the work reported finished as a whole, then the next work offered or asked
# for: "All tasks are complete. Let me know what you'd like next", "Everything
# is done; what should we tackle next?", "全部完成了，接下来做什么？"
_ALL_DONE = re.compile(
    r'\b(?:all\s+(?:the\s+)?(?:tasks?|work|items?|steps?|phases?|changes?|todos?)|everything|the\s+(?:task|work|feature|fix|implementation|plan)'
    r'|(?:this|that)\s+(?:task|work|phase|feature))\s+(?:(?:is|are|has\s+been|have\s+been)\s+)(?:now\s+)?(?:complete|completed|done|finished|implemented)\b'
    r'|(?:全部|都|所有任务)(?:已经?)?完成',
    re.IGNORECASE,
)
_NEXT_WORK = re.compile(
    r'\bwhat\s+(?:you\s*(?:\'d|would)\s+like|(?:would|do)\s+you\s+(?:like|want))\s+(?:me\s+)?to\s+(?:work\s+on|do|tackle|look\s+at)\s+next\b'
    r'|\b(?:what|anything)\b[^.?!\n]{0,40}\bnext\b|\bwhat\s+else\b|(?:接下来|下一步)[^。！？\n]{0,10}(?:做|干)?(?:什么|哪)',
    re.IGNORECASE,
)


def hands_over(text: str) -> str | None:
    """The closing words of `text` when it reports the work finished as a
    whole and then offers or asks for the next work (a hand-over, not the
    choice of this work asked back), else None."""
    asked = asks(text)
    if not asked or not _NEXT_WORK.search(asked):
        return None
    said = before_question(text) or text
    done = _ALL_DONE.search(said)
    # (what it lists before as fixed may name what was missing: only the
    # words from the claim on can leave the work open)
    if not done or _NEGATED.search(said[max(0, done.start() - 20):done.start()]) or unfinished(said[done.start():]):
        return None
    return asked


# the client's own line when the model's call failed, written into the
# assistant's text: "API Error: Unable to connect to API", "API Error: 529
# Overloaded", "API Error: 500 Internal server error", "Request timed out"
# (the client's words, as it spells them: an agent's "fixed the rate
# limit" or "the api error" in passing is no such line)
_API_ERROR = re.compile(r'(?:^|(?<=[\s.!?\[]))API Error(?::|\s+\d{3}\b)[^\n]{0,400}$')


def api_error(text: str) -> str | None:
    """The API error the turn ended with (the client's line closing the
    text), else None."""
    tail = (text or '').strip()[-600:]
    m = _API_ERROR.search(tail)
    return ' '.join(m[0].split())[:160] if m else None


# -- a failure the agent reports as not the work's -----------------------------------
# "The only failure is the pre-existing e2e test that needs a live server",
# "1 fail: an auth error of the test account, not related to this change",
# "失败的用例与本次改动无关": the turn saw the run fail and says so, naming
# its cause outside the work; a claim beside it speaks of the other tests
_FAILURE = r'\b(?:fail\w*|errors?|erroring|red)\b|失败|报错'
_OUTSIDE = (
    r'\bpre-?existing\b|\bunrelated\b|\bnot\s+(?:\w+\s+){0,2}?(?:related|caused\s+by|due\s+to)\b|\bnothing\s+to\s+do\s+with\b'
    r'|\bindependent\s+of\s+(?:our|this|these|my)\b|\b(?:infrastructure|environment(?:al)?|network|credentials?|account)\s+(?:issue|problem|error|failure)s?\b|\bflak(?:y|es?)\b'
    r'|\b(?:needs?|requires?)\s+(?:a\s+)?(?:live|running|real)\b|\bwas\s+(?:already\s+)?failing\s+before\b'
    r'|与(?:本次|这次|此次)?(?:修改|改动|变更)无关|(?:之前|原本|本来)就(?:失败|有|存在)|环境问题'
)
_EXCUSED = re.compile(rf'(?:{_FAILURE})[^.!?。！？\n]{{0,160}}?(?:{_OUTSIDE})|(?:{_OUTSIDE})[^.!?。！？\n]{{0,80}}?(?:{_FAILURE})', re.I)


def excuses(text: str) -> str | None:
    """The sentence of `text` that reports a failing run and puts its cause
    outside the work (pre-existing, unrelated, a live service it needs),
    else None: the turn knows that run failed."""
    for sentence in _SENTENCE.split(text or ''):
        if _EXCUSED.search(sentence):
            return ' '.join(sentence.split())[:200]
    return None


# -- asking where the code is ---------------------------------------------------------
# "where is loadConfig defined?", "which file has the retry logic?", "I can't
# find parse_range", "找不到 loadConfig", "它定义在哪个文件？": the agent knows
# the work and has lost its place (not "where were we?", "where should I
# start?", which ask for the work itself)
_EN_WHERE = (
    r"\bwhere\s+(?:is|are|was|were|does|do|did|'s)\s+(?!(?:we|i|you)\b)(?:the\s+|this\s+|that\s+|our\s+)?[`'\"]?[\w./:$-]+",
    r'\bwhere\s+(?:\w+\s+){0,3}?(?:is|are)\s+(?:defined|declared|implemented|located|kept|stored|registered)\b',
    r'\bwhere\s+(?:\w+\s+){0,3}?(?:lives?|sits?)\b',
    r'\bwhich\s+(?:file|module|package|class|directory|folder|source\s+file)\s+(?:has|holds|contains|defines|declares|is|does|should|implements|owns)\b',
    r"\b(?:can'?t|cannot|can\s+not|couldn'?t|could\s+not|unable\s+to|don'?t|do\s+not|didn'?t|did\s+not)\s+(?:seem\s+to\s+)?(?:find|locate)\b",
    r'\b(?:point|direct)\s+me\s+to\s+(?:the\s+)?(?:file|code|module|function|definition|place)\b',
    r'\bnot\s+(?:sure|certain)\s+where\s+(?!(?:we|i)\s+(?:left|were|are|stopped)\b)(?:the\s+)?[\w./`$-]+\s+(?:is|are|lives?|was)\b',
)
_ZH_WHERE = (
    r'找不到', r'没(?:有)?找到', r'(?:定义|实现|声明|位于|放)在哪', r'在哪(?:个|一个)?(?:文件|模块|目录|函数|类)',
    r'哪个(?:文件|模块|目录)(?:里|中)?(?:有|定义|实现|包含)', r'(?:代码|函数|文件)在哪',
)
_OTHER_WHERE = (
    r"\bo[uù]\s+(?:est|sont|se\s+trouve(?:nt)?)\s+(?:d[ée]fini|la\s+fonction|le\s+fichier|le\s+code)",
    r'\bje\s+ne\s+trouve\s+pas\b', r'\bwo\s+(?:ist|liegt|steht|befindet\s+sich)\b(?!\s+(?:wir|ich)\b)',
    r'\b(?:finde|fand)\s+(?:\S+\s+){1,3}nicht\b', r'\bd[oó]nde\s+(?:est[aá]|se\s+(?:define|encuentra))\b', r'\bno\s+encuentro\b',
)
_WHERE = re.compile('|'.join(_EN_WHERE + _ZH_WHERE + _OTHER_WHERE), re.I)


def asks_where(text: str) -> str | None:
    """The sentence of `text` that asks where the code to change is, or
    says it cannot be found, else None."""
    # its closing words: where it stopped (and a bound on the work)
    for sentence in _SENTENCE.split((text or '')[-1000:]):
        if _WHERE.search(sentence):
            return ' '.join(sentence.split())[:200]
    return None


# -- prompts that only say "go on" -----------------------------------------------------
_GO_ON_WORDS = (
    r'(?:please\s+)?(?:continue|go\s+on|carry\s+on|keep\s+going|proceed|resume|go\s+ahead|next|do\s+it|'
    r'pick\s+up\s+where\s+you\s+left\s+off|continue\s+where\s+you\s+left\s+off|ok(?:ay)?|yes|sure|thanks?|'
    # a retry after an interruption asks for the same work again
    r'try\s+(?:it\s+)?again|retry|once\s+more|再试一次|重试|'
    r'继续|接着(?:做|来|干)?|好的?|可以|开始吧?|继续吧|继续做|继续干|往下做|请继续|嗯|'
    # a greeting asks for no work: "hi again", "Hallo, bin wieder da", "我回来了"
    r"hi|hello|hey|hallo|hola|bonjour|salut|again|(?:i'?m\s+|i\s+am\s+)?back(?:\s+from\s+\w+)?|"
    r'(?:ich\s+)?bin\s+wieder\s+da|(?:je\s+suis\s+)?de\s+retour|(?:ya\s+)?(?:estoy\s+)?de\s+vuelta|你好|嗨|哈喽|我?回来了)'
    r'(?:\s+(?:please|with\s+the\s+task|working|on))?'
)
_GO_ON = re.compile(rf'^[\W_]*{_GO_ON_WORDS}(?:[\W_]+{_GO_ON_WORDS})*[\W_]*$', re.I)


def goes_on(prompt: str) -> bool:
    """The prompt only tells the agent to go on, or greets it (no request
    of its own)."""
    return bool(_GO_ON.match(' '.join((prompt or '').split())))


# -- prompts that ask how the work stands ---------------------------------------------
_EN_STATUS = (
    r'\b(?:pass\w*|fail\w*|green|red|done|finished|complete[ds]?|work(?:s|ing|ed)?|fixed|broken|status|progress)\b',
    r'\bwhere\s+(?:are|were)\s+we\b', r"\bhow(?:'s|\s+is|\s+are)\s+(?:it|things|we)\b",
)
_ZH_STATUS = (
    r'什么情况', r'进展', r'进度', r'怎么样了?', r'(?:过|好|完|完成|通过|修好|跑通|绿)了?[吗么没]', r'到哪',
)
_STATUS = re.compile('|'.join(_EN_STATUS + _ZH_STATUS), re.IGNORECASE)
# what a "yes" answers for: the tests, or the work being done ("is #212 done?", "好了吗？")
_TESTS_ASKED = re.compile(
    r'\b(?:tests?|specs?|suites?|ci|build|pass\w*|done|finished|fixed|complete[ds]?|ready)\b'
    r'|测试|单测|用例|通过|跑通|好了|完成|修好|搞定',
    re.IGNORECASE,
)
_YES = re.compile(
    r'(?:yes|yep|yeah|yup|correct|it\s+did|they\s+did|they\s+do|it\s+does|all\s+(?:green|good|pass\w*)|done)\b'
    r'|是的|对的?|嗯|通过了|(?:都|全|能|全都)?过了|好了|可以了|搞定了?|完成了|没问题|绿了',
    re.IGNORECASE,
)


def asks_status(prompt: str) -> bool:
    """The prompt only asks how the work stands ("did the JPY test
    pass?", "现在什么情况？", "where were we? keep going"): a short
    question, maybe with a "go on", and no new request."""
    said = ' '.join((prompt or '').split())
    parts = [p for p in re.split(r'(?<=[?？])\s*', said) if p.strip()]
    # "好了没", "过了吗": a Chinese question needs no mark, its particle asks
    asked = [p for p in parts if (_QUESTION_END.search(p) or re.search(r'[吗么没呢][\W_]*$', p)) and _STATUS.search(p)]
    return len(said) <= 120 and bool(asked) and all(p in asked or goes_on(p) for p in parts)


# a request that makes its work wait on a pass: "push the branch if it is
# green", "¿ya pasan los tests? si es así, haz commit", "如果测试通过就提交"
_EN_ON_PASS = (
    r'\b(?:if|once|when|provided|as\s+long\s+as)\b[^.;!?\n]{0,60}?\b(?:green|pass(?:es|ed|ing)?|succeed\w*|clean)\b',
    r'\bif\s+(?:so|yes|they\s+do|it\s+does)\b',
)
_ZH_ON_PASS = (
    r'(?:如果|若|假如|要是|一旦|只要)[^。！？\n]{0,30}?(?:通过|过了|绿|跑通|没问题)', r'(?:通过|过了|绿了|跑通了?)(?:的话)?就',
    r'(?:如果|要是)?是的话', r'如果(?:是|可以|行)',
)
_OTHER_ON_PASS = (
    r'\b(?:si|une\s+fois\s+que|quand|dès\s+que)\b[^.;!?\n]{0,60}?\b(?:passent|passe|verts?|réussi\w*)\b',
    r"\bsi\s+(?:oui|c['’]est\s+le\s+cas)\b",
    r'\b(?:wenn|falls|sobald)\b[^.;!?\n]{0,60}?\b(?:grün|durchlaufen|durchläuft|bestanden|bestehen|klappt)\b',
    r'\b(?:wenn|falls)\s+ja\b', r'\bwenn\s+(?:das|dem)\s+so\s+ist\b',
    r'\b(?:si|cuando|una\s+vez\s+que)\b[^.;!?\n]{0,60}?\b(?:pasan?|verdes?|funciona\w*)\b',
    r'\bsi\s+es\s+así\b', r'\ben\s+ese\s+caso\b',
)
_ON_PASS = re.compile('|'.join(_EN_ON_PASS + _ZH_ON_PASS + _OTHER_ON_PASS), re.I)
# what the pass is of: an "if so" follows a question about the tests
_PASS_WORDS = re.compile(
    r'\b(?:tests?|specs?|suites?|ci|build|green|pass\w*|grün|verts?|verdes?|pasan?|passent)\b'
    r'|测试|单测|用例|通过|绿|跑通|过了',
    re.I,
)


def on_pass(prompt: str | None) -> bool:
    """The user's request makes what it asks wait on the tests passing
    ("push it if it is green", "¿ya pasan los tests? si es así, haz
    commit"): a release in the turn still needs that pass."""
    said = ' '.join((prompt or '').split())
    return bool(_ON_PASS.search(said)) and bool(_PASS_WORDS.search(said))


# the tests a request names: "run the auth tests", "the parser specs",
# "tell me if test_refund passes", "跑一下 auth 的测试"
_NAMED_TESTS = re.compile(
    r'\b([\w./:-]+)\s+(?:unit\s+|integration\s+|e2e\s+)?(?:tests?|specs?|suites?|cases)\b'
    r'|\b(test_\w+|\w+_(?:test|spec)\w*|[A-Z]\w*(?:Tests?|Spec))\b'
    r'|([\w./:-]+)\s*(?:的)?\s*(?:测试|单测|用例)',
)
# words before "tests" that name no tests of their own
_ANY_TESTS = frozenset((
    'the', 'all', 'a', 'an', 'unit', 'integration', 'e2e', 'failing', 'new', 'remaining', 'these', 'those', 'my', 'our',
    'your', 'both', 'two', 'three', 'every', 'any', 'some', 'other', 'full', 'whole', 'existing', 'relevant', 'run', 'if',
    'and', 'or', 'of', 'test', 'tests', 'it', 'its', 'their', 'this', 'that', 'again', 'then', 'once', 'when',
    'whether', 'before', 'after', 'with', 'fix', 'passing',
))


def tests_named(prompt: str | None) -> list[str]:
    """The tests a user's request names, by the word that names them
    ("run the auth tests and tell me" -> [auth]); [] when it asks for the
    tests at large."""
    ret: list[str] = []
    for m in _NAMED_TESTS.finditer(prompt or ''):
        word = (m[1] or m[2] or m[3] or '').strip('./:-')
        if word and word.lower() not in _ANY_TESTS and not word.isdigit() and word not in ret:
            ret.append(word)
    return ret


def answers_yes(prompt: str | None, text: str) -> str | None:
    """The closing text's first sentence when it answers "yes" to the
    user's question whether the tests pass ("did the JPY test pass?" ->
    "Yes."): a claim that they do; else None."""
    if not prompt or not asks_status(prompt) or not _TESTS_ASKED.search(prompt):
        return None
    first = next((s for s in _SENTENCE.split((text or '').strip()) if s.strip()), '')
    if not _YES.match(first.strip()):
        return None
    return ' '.join(first.split())[:200]


# -- places a decision keeps out of the work ---------------------------------------
# "Output/ is ModuleBuilder output, regenerated by ./build.ps1", "V1
# (src/VaultV1.sol) is deployed and frozen", ".svelte-kit/ is build output:
# never edit", "roles/nginx_legacy ... 冻结，不改": the place is not the task's
_EXCLUDES = re.compile(
    r"\b(?:do\s+not|don'?t|never|must\s+not|shouldn'?t)\s+(?:be\s+)?(?:edit|touch|chang|modif|hand[\s-]?edit)\w*"
    r'|\bfrozen\b|\bread[\s-]only\b|\b(?:re)?generated\b|\bbuild\s+output\b|\bgenerator\s+output\b|\bleave\s+(?:it|them|as\s+is)\b'
    r'|\bkeep\s+(?:it|them)\s+as\s+(?:it|they)\s+(?:is|are)\b|\bvendored\b|\bhands\s+off\b'
    r'|冻结|不要?改|别(?:改|动)|不要?动|只读|(?:自动)?生成的|禁止修改|保持原样|原样保留',
    re.I,
)
_CLAUSE_END = re.compile(r'(?<=[.;:!?。；：])\s+|(?<=[；：。])')
_PLACE = re.compile(r'(?<![\w@])(?:\.{0,2}/)?(?:[\w.-]+/)+(?:[\w.-]+)?|(?<![\w@/])[\w-]+\.[A-Za-z]{1,5}\b(?![\w.(])')


def excluded_places(decisions: list[str]) -> list[str]:
    """The files and directories the Decisions keep out of the work (a
    generated, vendored, frozen or read-only place, one never to edit):
    the first place each clause that says so names (its subject; "edit
    Source/ only" after it is not excluded)."""
    ret: list[str] = []
    for line in decisions:
        for clause in _CLAUSE_END.split(line):
            if not _EXCLUDES.search(clause):
                continue
            found = [p for p in _PLACE.findall(clause) if p.strip('./')]
            dirs = [p for p in found if '/' in p]
            place = (dirs or found or [''])[0].removeprefix('./')
            if place and place not in ret:
                ret.append(place)
    return ret


# -- side remarks: what a summary mentions beside the task ---------------------------
_EN_SIDE = (
    r'\balso\b', r'\badditionally\b', r'\bbesides\b', r'\bas\s+well\b', r'\bby\s+the\s+way\b',
    r'\bon\s+the\s+side\b', r'\bside\s+(?:note|remark|topic|idea|task)\b', r'\bnice[\s-]+to[\s-]+have\b',
    r'\blater\b', r'\beventually\b', r'\bsome\s*day\b', r'\bin\s+the\s+future\b', r'\bfollow[\s-]?up\b',
    r'\bidea\b', r'\bmight\s+(?:want|like)\b', r'\bwould\s+(?:also\s+)?like\b', r'\bmentioned\b',
    r'\bseparately\b', r'\bafterwards?\b', r'\bonce\s+(?:this|that|it)\s+is\s+done\b', r'\bnot\s+(?:yet\s+)?started\b',
    r'\bout\s+of\s+scope\b', r'\bunrelated\b', r'\bsuggested\b', r'\bcould\s+also\b', r'\bTODO\b',
    # "Off-topic: ... 'not today'", "could use colour at some point", "in passing"
    r'\boff[\s-]?topic\b', r'\bnot\s+(?:today|now|for\s+now|this\s+time)\b', r'\bat\s+some\s+point\b',
    r'\bin\s+passing\b', r'\b(?:grumbl|complain)\w*', r'\bnext\s+(?:release|version|sprint)\b',
)
_ZH_SIDE = (
    r'另外', r'顺便', r'此外', r'还想', r'还提到', r'提到', r'以后', r'之后再', r'后续', r'有空', r'想法', r'建议',
    r'可以考虑', r'待办', r'以及', r'也想', r'另一个',
    r'顺口', r'下个版本', r'下一版', r'再说', r'第二期', r'下一期', r'暂不', r'先不', r'不急', r'回头',
)
_SIDE = re.compile('|'.join(_EN_SIDE + _ZH_SIDE), re.I)
_SUMMARY_SENTENCE = re.compile(r'(?<=[.!?;])\s+|\n+|(?<=[。！？；])')


_ITEM = re.compile(r'\s*(?:[-*•]|\d+[.)]|#)')


def _unwrap(text: str) -> str:
    """A summary's wrapped lines joined: a line break inside a paragraph
    (not before a list item or a heading, not after a sentence's end, not
    after a list item unless the next line is indented) ends nothing."""
    out: list[str] = []
    for line in text.splitlines():
        prev = out[-1] if out else ''
        joins = (
            prev.strip() and line.strip() and not _ITEM.match(line)
            and prev.rstrip()[-1] not in '.!?;:。！？；：'
            and (not _ITEM.match(prev) or line[:1].isspace())
        )
        if joins:
            out[-1] = f'{prev.rstrip()} {line.strip()}'
        else:
            out.append(line)
    return '\n'.join(out)


# a summary's heading (Claude Code's "7. Pending Tasks:", "## Next step"): one line
_HEADING = re.compile(r'^[ \t]*(?:#+[ \t]*)?(?:\d+\.[ \t]*)?(?:\*\*)?([A-Z][A-Za-z /&()-]{2,40}?)(?:\*\*)?:?[ \t]*(?:\*\*)?[ \t]*$')
# the sections that hold the work in flight and the rest of it: their
# items are the task's own steps, not remarks beside it
_WORK_HEADING = re.compile(
    r'^(?:pending|remaining|open|outstanding)\s+(?:tasks?|work|items?|steps?)\b|^(?:optional\s+|immediate\s+)?next\s+steps?\b'
    r'|^current\s+(?:work|state|status|task)\b|^work\s+in\s+progress\b|^in\s+progress\b',
    re.I,
)
# a status a plan gives its step ("Gap 4 (NOT STARTED):", "[TODO]", "Phase
# 6: not started", "[pending]"): where the work stands, not a remark
_STATUS_TAG = re.compile(
    r'[\[(]\s*(?:not\s+(?:yet\s+)?started|todo|pending)\b[^\])\n]{0,60}[\])]'
    r'|(?<=:)\s*(?:not\s+(?:yet\s+)?started|todo|pending)\b',
    re.I,
)


def side_remarks(summary: str) -> list[str]:
    """The sentences (or list items) of a summary that mention something
    beside the task: "also", "later", "nice to have", "另外", "顺便"...;
    not those of its pending tasks, next step or current work (the rest
    of the task), nor a plan step's status ("Step 4 (NOT STARTED)")."""
    ret = []
    in_work = False
    for line in _unwrap(summary or '').splitlines():
        head = _HEADING.match(line)
        if head:
            in_work = _WORK_HEADING.match(head[1].strip()) is not None
            continue
        if in_work:
            continue
        for s in _SUMMARY_SENTENCE.split(line):
            if s.strip() and _SIDE.search(_STATUS_TAG.sub(' ', s)):
                ret.append(' '.join(s.split()))
    return ret


# -- words, for "says the same thing" ----------------------------------------------------
_ASCII_WORD = re.compile(r'[A-Za-z_][\w.-]{2,}')
_CJK = re.compile(r'[\u3400-\u9fff]+')
# an identifier's words: HTTPServer -> HTTP Server, validateEnv -> validate Env
_CAMEL = re.compile(r'[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+')
_STOP = frozenset((
    'the', 'and', 'for', 'with', 'from', 'into', 'that', 'this', 'then', 'now', 'its', 'are', 'was',
    'will', 'have', 'has', 'not', 'all', 'any', 'but', 'our', 'you', 'your', 'can', 'let', 'use',
    'make', 'also', 'just', 'only', 'one', 'two', 'new', 'old', 'file', 'files', 'code', 'update', 'like',
    'add', 'fix', 'run', 'test', 'tests', 'next', 'still', 'again', 'back', 'done', 'need', 'want',
    # the words of every program: they say nothing about which task an edit serves
    'def', 'return', 'func', 'function', 'const', 'var', 'import', 'export', 'class', 'self', 'none',
    'null', 'nil', 'true', 'false', 'await', 'async', 'package', 'pub', 'impl', 'struct', 'else',
    'elif', 'while', 'try', 'catch', 'except', 'throw', 'raise', 'err', 'string', 'str', 'int', 'bool',
    'defer', 'static', 'public', 'private', 'void', 'mut', 'match', 'switch', 'case', 'break',
))


# a number that names the work ("issue 41", "PR #37", "next 37", "step 3",
# "Gaps 1, 4 and 6", "第3步"): the work's own word, as `#41`, wherever it
# is said that way; a bare number ("3 tests") names nothing
_WORK_NUMBER = re.compile(
    r'(?:\b(?:issues?|PRs?|MRs?|pull\s+requests?|tickets?|bugs?|steps?|phases?|gaps?|tasks?|items?|stages?|parts?'
    r'|milestones?|stor(?:y|ies)|chapters?|requests?|number|no\.'
    # "next 37 then?" names the work; "the next 3 tests" counts
    r'|next(?=[ \t]*#?\d+[ \t]*(?:[?!.,;:)]|$|(?:then|please|now|too|one)\b)))'
    r'(?:[ \t]*#|[ \t-])[ \t]*|(?<![\w&#])#)'
    r'(\d+(?:[ \t]*(?:,|and|&|/|to|-)[ \t]*#?\d+(?!\w|\.\d))*)(?!\w|\.\d)'
    r'|第[ \t]*(\d+)[ \t]*(?:步|个|项|阶段|期|部分|条)',
    re.I | re.M,
)


def work_numbers(text: str) -> set[str]:
    """The numbers of `text` that name the work, as `#N`."""
    ret: set[str] = set()
    for m in _WORK_NUMBER.finditer(text or ''):
        ret.update(f'#{int(n)}' for n in re.findall(r'\d+', m[1] or m[2]))
    return ret


def words(text: str) -> set[str]:
    """The content words of `text`: identifiers and words of three letters
    or more (lowercased, without stop words), an identifier's parts
    (snake_case, camelCase, kebab-case, dotted), Chinese bigrams, and
    the numbers that name the work (`#41`: work_numbers)."""
    ret = work_numbers(text) if any(c.isdigit() for c in text or '') else set()
    for w in _ASCII_WORD.findall(text or ''):
        w = w.strip('.-')
        parts = [p for chunk in re.split(r'[._/-]', w) for p in ([chunk, *_CAMEL.findall(chunk)])]
        for part in (w, *parts):
            part = part.lower()
            if len(part) >= 3 and part not in _STOP:
                ret.add(part)
    for run in _CJK.findall(text or ''):
        ret.update(run[i:i + 2] for i in range(len(run) - 1))
    return ret


# a literal that is not a word: a range, a date, a version (10-30/10, 1.4.0)
_LITERAL = re.compile(r'(?<![\w./:-])\d+(?:[-/.:]\d+)+(?![\w./:-]*[A-Za-z])')


def literals(text: str) -> set[str]:
    """The literals of `text` made of numbers and separators ("10-30/10",
    "2026-12-01", "1.4.0"): a test's input said again names that test."""
    return set(_LITERAL.findall(text or ''))


# endings taken off a word so that its forms meet: log/logger/logs,
# validate/validation, fail/failed/failures, type/typing, stream/streaming
_SUFFIXES = (
    'ations', 'ation', 'ings', 'ures', 'ions', 'ates', 'ated', 'ing', 'ure', 'ion', 'ate', 'ers', 'ies',
    'ed', 'er', 'es', 'ly', 's', 'e',
)


def stem(word: str) -> str:
    """`word` without a common English ending (three letters kept)."""
    if not word.isascii() or not word.isalpha():
        return word
    for end in _SUFFIXES:
        if word.endswith(end) and len(word) - len(end) >= 3:
            word = word[:-len(end)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in 'aeiou':
        word = word[:-1]  # logg(er) -> log
    return word


def stems(text: str) -> set[str]:
    """`words(text)`, each stemmed: what two texts are compared by."""
    return {stem(w) for w in words(text)}


_DEFINED = re.compile(
    r'\b(?:def|defp|defmacro|defmodule|function|func|fn|proc|class|struct|interface|type|enum|trait|var|let|const)\s+'
    r'(?:mut\s+)?(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)'  # Rust's `let mut x` defines x
    r'|\bimpl(?:<[^>]*>)?\s+(?:[\w]+::)*(\w+)'
    r'|^\s*(?:export\s+)?([A-Za-z_$][\w$]*)\s*(?::[^=\n]*)?=\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*=>)'
    # a Lisp's (defn add-vary [...]), (define (parse-range s) ...)
    r'|\((?:defn-?|defun|defmacro|define)\s+\(?([^\s()\[\]]+)',
    re.M,
)


def defined(text: str) -> list[str]:
    """The names `text` defines (functions, types, constants), in order."""
    ret: list[str] = []
    for m in _DEFINED.finditer(text or ''):
        name = m[1] or m[2] or m[3] or m[4]
        if name and name not in ret:
            ret.append(name)
    return ret
