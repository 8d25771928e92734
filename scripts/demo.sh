#!/bin/sh
# The README's first command (`make demo`): `kenomem tour` on a fresh demo vault. It makes
# a dozen memories of every kind, then runs list, recall (--explain), remember, patterns,
# working memory and a context block on them, saying what each shows.
set -eu
K="${KENOMEM:-kenomem}"
VAULT="${DEMO_VAULT:-demo-vault}"
rm -rf "$VAULT"
"$K" tour "$VAULT" --no-pause
