"""Generate a deterministic synthetic vault of N memories, for benchmarks.

    python bench/gen_vault.py 10000 /tmp/kenomem-bench-10k

The same N and seed always give the same files: short English-like notes (20-300
words) about a person's work and life, spread over the four memory types and two years,
with tags, importance and the frontmatter kenomem writes. Nothing here is used by the
test suite.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kenomem.files.memory import Memory, render
from kenomem.files.paths import slugify


def _words(text: str) -> list[str]:
    return text.split()


SUBJECTS = _words("""
alice bob carla dmitri elena farid grace hiroshi ingrid jonas kemal lucia marco nadia
oscar priya quentin rosa samir tanya ulrich vera wen xavier yusuf zoe
""")

TOPICS = _words("""
postgres kubernetes invoice budget roadmap launch migration backup dashboard sprint
retrospective onboarding contract deadline release pipeline terraform grafana kafka
redis nginx django react typescript rust python golang billing pricing newsletter
conference workshop interview hiring vacation dentist marathon garden recipe birthday
anniversary flight hotel passport mortgage insurance laptop keyboard monitor headphones
podcast novel guitar piano photography cycling climbing sailing chess coffee tea
""")

WORDS = _words("""
the a an and or but with without for from into onto about after before during under
over between through again always never often sometimes usually rarely quickly slowly
carefully team project meeting call email message note plan idea issue bug fix test
deploy server database client customer user account report review design decision
question answer problem solution result change update version feature request support
weekly daily monthly morning evening night weekend office home remote travel city
prefers likes dislikes wants needs asked told said agreed decided discussed moved
started finished shipped released broke fixed learned noticed remembered forgot
important urgent small large new old better worse simple complex clear vague
because since while until unless although however therefore also maybe probably
""")

TAGS = _words("""
work personal family health finance travel project meeting preference decision idea
learning reading music sport food home tech writing
""")

TYPES = (("episodic", 0.5), ("semantic", 0.35), ("procedural", 0.15))


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 16))]
    words.insert(rng.randrange(len(words)), rng.choice(TOPICS))
    if rng.random() < 0.5:
        words.insert(rng.randrange(len(words)), rng.choice(SUBJECTS).capitalize())
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def body(rng: random.Random) -> str:
    target = rng.randint(20, 300)
    out: list[str] = []
    count = 0
    while count < target:
        s = sentence(rng)
        out.append(s)
        count += len(s.split())
    paragraphs = [" ".join(out[i : i + 4]) for i in range(0, len(out), 4)]
    return "\n\n".join(paragraphs) + "\n"


def make(rng: random.Random, n: int, start: datetime) -> Memory:
    mem_type = rng.choices([t for t, _ in TYPES], weights=[w for _, w in TYPES])[0]
    created = start + timedelta(seconds=rng.randint(0, 730 * 86400))
    title = f"{rng.choice(TOPICS).capitalize()} {rng.choice(WORDS)} {rng.choice(TOPICS)}"
    if rng.random() < 0.5:
        title += f" with {rng.choice(SUBJECTS).capitalize()}"
    return Memory(
        id=f"mem_{created:%Y%m%d_%H%M%S}_{n:05x}",
        type=mem_type,
        title=title,
        body=body(rng),
        path="",
        tags=tuple(sorted(set(rng.sample(TAGS, rng.randint(0, 3))))),
        created=created,
        last_accessed=created,
        importance=rng.choices(range(1, 11), weights=[3, 6, 8, 10, 12, 10, 7, 4, 2, 1])[0],
        source="bench",
        when=created if mem_type == "episodic" else None,
    )


def generate(n: int, target: Path, seed: int = 7) -> int:
    rng = random.Random(seed * 1_000_003 + n)
    start = datetime(2024, 11, 1, tzinfo=UTC)
    if target.exists():
        shutil.rmtree(target)
    template = Path(__file__).resolve().parent.parent / "vault-template"
    shutil.copytree(template, target)
    for i in range(n):
        mem = make(rng, i, start)
        folder = f"episodic/{mem.created:%Y-%m}" if mem.type == "episodic" else mem.type
        path = target / folder / f"{slugify(mem.title)}-{i:05x}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(mem), encoding="utf-8")
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int)
    parser.add_argument("target", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    generate(args.count, args.target, args.seed)
    print(f"{args.count} memories in {args.target}")


if __name__ == "__main__":
    main()
