"""What the sleep cycle drops as trivia, measured: never a fact-bearing entry.

    python bench/trivia.py                 # the labelled entries and LoCoMo dev's turns

Two sets:

- bench/data/trivia-entries.jsonl: entries written for this, each labelled `trivia`
  (acknowledgements, greetings, thanks: "Sounds great!") or `fact-bearing` (a name, a
  number, a place, a decision, or any statement: "ok, the meeting is at 3pm", "Thanks,
  Anna!"). Reported: how many fact-bearing entries `is_trivia` drops (it must be none),
  and how much of the trivia it catches.
- LoCoMo dev (bench/locomo.py's reading): every turn, with its photo caption as the
  import writes it; how many are judged trivia, which, and how many of those are the
  evidence of a question (it must be none).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo

from kenomem.sleep.salience import is_trivia

LABELLED = Path(__file__).resolve().parent / "data" / "trivia-entries.jsonl"


def main() -> int:
    rows = [json.loads(line) for line in LABELLED.read_text("utf-8").splitlines() if line]
    facts = [r["text"] for r in rows if r["label"] == "fact-bearing"]
    trivia = [r["text"] for r in rows if r["label"] == "trivia"]
    lost = [t for t in facts if is_trivia(t)]
    caught = [t for t in trivia if is_trivia(t)]
    missed = [t for t in trivia if not is_trivia(t)]
    print(f"labelled: {len(rows)} entries, {len(facts)} fact-bearing, {len(trivia)} trivia")
    print(f"- fact-bearing judged trivia: {len(lost)} {lost}")
    print(f"- trivia judged trivia: {len(caught)} of {len(trivia)}; missed: {missed}")
    conversations, _ = locomo.load_data(locomo.DEFAULT_DATA, [], None)
    turns = dropped = evidence_dropped = 0
    examples: list[str] = []
    for conv in conversations:
        evidence = {e for q in conv.questions for e in q.evidence}
        for turn in conv.turns:
            turns += 1
            text = turn.text + (f"\n\n[photo: {turn.caption}]" if turn.caption else "")
            if is_trivia(text):
                dropped += 1
                evidence_dropped += turn.dia_id in evidence
                examples.append(f"{conv.sample_id} {turn.dia_id} {turn.text!r}")
    print(
        f"LoCoMo dev: {turns} turns, {dropped} judged trivia, {evidence_dropped} of them evidence"
    )
    for line in examples:
        print(f"- {line}")
    return 1 if lost or evidence_dropped else 0


if __name__ == "__main__":
    raise SystemExit(main())
