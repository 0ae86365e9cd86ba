"""Whether the secret scanner could find anything in a text, told
without importing it: agitmem/secrets.py is 165 KB of bytecode, a tenth of
the prompt hook's run, loaded to redact a request of two words.

A rule of secrets.py runs only where one of its keywords is in the text
(ASCII lower case), or, for a `long` rule and the one without keywords, in
a run of RUN DENSE_CHARS in a row; the text is unescaped first where it
holds a backslash.  A text with no backslash, no such run and none of the
other rules' keywords makes no rule run: `secrets.redact` gives it back as
it is.  tests/secret_words_test.py holds these names equal to the
scanner's own."""
from __future__ import annotations

# every keyword of secrets.RULES whose rule is not `long` (looked up in the
# whole text, not in the long runs)
KEYWORDS = (
    '$1$', '$2$', '$2a$', '$2b$', '$2x$', '$2y$', '$5$', '$6$', '$apr1$', '-----begin', '--header',
    '--password', '--user', '-h', '-p', '-u', '://', 'access', 'account-key', 'account.key',
    'account_key', 'accountkey', 'api_key', 'apikey', 'auth', 'auths', 'aws', 'basic', 'bearer',
    'bittrex', 'contribsys', 'cred', 'credential', 'discord', 'eyj', 'heroku', 'hubspot', 'key',
    'kind:', 'kucoin', 'launchdarkly', 'mailgun', 'message', 'name', 'name=', 'pass', 'passw',
    'passwd', 'password', 'plaid', 'private', 'pscale_', 'pwd', 'q~', 'secret', 'secret_key',
    'sendbird', 'sig=', 'sl.', 'snyk', 'sonar', 'squarespace', 'storageaccesskey', 'sumo', 'tfp_',
    'token',
)
# secrets.DENSE_CHARS and secrets._RUN
DENSE_CHARS = (
    'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-=/+~'
)
RUN = 16
_DENSE_TABLE = bytes(0x61 if chr(b) in DENSE_CHARS else 0x20 for b in range(256))


def may_hold(text: str) -> bool:
    """False when no rule of secrets.py could run on `text` (then
    `secrets.redact(text)` is `text`); True when one could."""
    if '\\' in text:
        return True  # unescaped before the rules look (secrets._unescaped)
    if text.encode('ascii', 'replace').translate(_DENSE_TABLE).find(b'a' * RUN) >= 0:
        return True
    # (str.lower finds every keyword secrets._ascii_lower does, and more:
    # the Kelvin sign made a `k` only ever says True where False was right)
    lower = text.lower()
    return any(k in lower for k in KEYWORDS)
