"""`import`: chat histories and memories from JSON or JSONL files."""
