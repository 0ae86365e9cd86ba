"""Build the fresh held-out part of the secrets corpus from Nosey Parker's rules.

    python tests/corpus/secrets/extract_noseyparker.py NOSEYPARKER_GITDIR

reads `crates/noseyparker/data/default/builtin/rules/*.yml` from a snapshot
of praetorian-inc/noseyparker with `git show HEAD:path` (nothing is
executed) and writes `fresh.jsonl` beside this file.  The mapping, fixed
before the part was measured (README.md says why):

- a rule's `examples` are secrets when the rule's `categories` hold
  `secret`; the examples of a rule without it (an identifier, a public
  token, a bucket name, an ARN) are left out, neither secret nor benign;
- every rule's `negative_examples` are benign;
- a case whose text is already in peers.jsonl (with any label) is left out,
  so the part holds only text the scanner was never tuned or read on;
- `claimed` is true for the rules of a service or kind that the scanner
  has a rule for (CLAIMED below, chosen from the rules' names and the
  scanner's rule ids, not from what it answers).
"""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import yaml

HERE = pathlib.Path(__file__).parent
RULES = 'crates/noseyparker/data/default/builtin/rules'

# Nosey Parker's rules whose service and credential the scanner claims (its
# rule ids: anthropic-key, artifactory-api-key, aws-secret-key, ...); the
# generic password/secret/key rules map to its assignment rules, HTTP basic
# and bearer to basic-auth / bearer-token, connection URIs to url-password.
CLAIMED = frozenset((
    'np.adobe.1', 'np.age.2', 'np.anthropic.1', 'np.artifactory.1',
    'np.atlassian.1', 'np.aws.2', 'np.aws.6', 'np.azure.1',
    'np.bitbucket.1', 'np.databricks.1', 'np.digitalocean.1',
    'np.digitalocean.2', 'np.digitalocean.3', 'np.dockerhub.1',
    'np.doppler.1', 'np.doppler.2', 'np.doppler.3', 'np.doppler.4',
    'np.doppler.5', 'np.doppler.6', 'np.dropbox.1', 'np.dynatrace.1',
    'np.facebook.2', 'np.figma.1',
    'np.generic.1', 'np.generic.2', 'np.generic.3', 'np.generic.4',
    'np.generic.5', 'np.generic.6', 'np.generic.11', 'np.generic.12',
    'np.generic.13', 'np.generic.14', 'np.generic.15', 'np.generic.16',
    'np.github.1', 'np.github.2', 'np.github.3', 'np.github.4',
    'np.github.7', 'np.gitlab.1', 'np.gitlab.2', 'np.gitlab.3',
    'np.google.2', 'np.google.5', 'np.grafana.1', 'np.grafana.2',
    'np.grafana.3', 'np.groq.1', 'np.hashicorp.4', 'np.hashicorp.5',
    'np.hashicorp.6', 'np.http.1', 'np.http.2', 'np.huggingface.1',
    'np.mailchimp.1', 'np.mailgun.1', 'np.mongodb.1', 'np.msteams.1',
    'np.newrelic.1', 'np.newrelic.2', 'np.newrelic.3', 'np.newrelic.4',
    'np.newrelic.5', 'np.newrelic.6', 'np.newrelic.7', 'np.newrelic.8',
    'np.newrelic.9', 'np.npm.1', 'np.openai.1', 'np.pem.1',
    'np.postgres.1', 'np.postman.1', 'np.pypi.1', 'np.rubygems.1',
    'np.sendgrid.1', 'np.shopify.2', 'np.shopify.3', 'np.shopify.4',
    'np.shopify.5', 'np.slack.2', 'np.slack.3', 'np.slack.4',
    'np.slack.5', 'np.slack.6', 'np.sonarqube.1', 'np.sourcegraph.1',
    'np.square.1', 'np.square.2', 'np.stripe.1', 'np.stripe.2',
    'np.telegram.1', 'np.twilio.1',
))


def _git(gitdir: str, *args: str) -> str:
    return subprocess.run(
        ('git', '-C', gitdir, *args), check=True, capture_output=True,
    ).stdout.decode('utf-8', 'replace')


def noseyparker(gitdir: str) -> Iterator[dict[str, Any]]:
    commit = _git(gitdir, 'rev-parse', 'HEAD').strip()
    paths = _git(gitdir, 'ls-tree', '-z', '--name-only', 'HEAD', f'{RULES}/')
    for path in sorted(p for p in paths.split('\0') if p.endswith('.yml')):
        doc = yaml.safe_load(_git(gitdir, 'show', f'HEAD:{path}'))
        for rule in doc.get('rules') or ():
            secret = 'secret' in (rule.get('categories') or ())
            keys = (('examples', 'secret'),) if secret else ()
            for key, label in (*keys, ('negative_examples', 'benign')):
                for n, text in enumerate(rule.get(key) or ()):
                    yield {
                        'text': text, 'label': label, 'family': rule['id'],
                        'source': 'noseyparker',
                        'repo': 'praetorian-inc/noseyparker', 'commit': commit,
                        'path': path, 'case': f'{rule["id"]} {key}[{n}]',
                        'claimed': rule['id'] in CLAIMED, 'heldout': True,
                    }


def main(argv: list[str]) -> int:
    with open(HERE / 'peers.jsonl') as f:
        seen = {json.loads(line)['text'] for line in f}
    with open(HERE / 'fresh.jsonl', 'w') as f:
        for case in noseyparker(argv[1]):
            if case['text'] in seen or not case['text'].strip():
                continue
            seen.add(case['text'])
            f.write(json.dumps(case, ensure_ascii=False) + '\n')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv))
