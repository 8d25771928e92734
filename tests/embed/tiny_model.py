"""A tiny real embedding model, made in the test: an ONNX graph and a tokenizer in the
layout fastembed loads (tokenizer.json, tokenizer_config.json, special_tokens_map.json,
config.json, model.onnx), so its loading, tokenizing, mean pooling and normalizing all
run for real, with nothing downloaded.

The graph is what a sentence encoder's first layer is: each token's row of an embedding
table (plus a token-type row, times the attention mask) as `last_hidden_state`. The
table puts the words of one topic along one axis, so "dog" and "retriever" are near and
"database" is far from both: a memory is found by a word it does not hold.
"""

from __future__ import annotations

import json
from pathlib import Path

TOPICS = {
    "dog": ("dog", "dogs", "puppy", "retriever", "hound", "labrador", "poodle", "pet"),
    "database": ("database", "postgres", "postgresql", "sql", "schema", "query"),
    "weather": ("rain", "umbrella", "storm", "forecast", "weather"),
    "food": ("pizza", "pasta", "dinner", "lunch", "recipe"),
}
# Words of no topic: each gets a small vector of its own, off the topics' axes.
COMMON = (
    "the a an is are was my our his her by in on at to of and for which who what where "
    "sleeps runs name named called golden old new production version fire garden "
    "biscuit likes loves every day week friday we use"
).split()
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
MODEL_NAME = "kenomem-tests/tiny-topics"


def vocabulary() -> dict[str, int]:
    words = list(SPECIAL)
    for members in TOPICS.values():
        words.extend(w for w in members if w not in words)
    words.extend(w for w in COMMON if w not in words)
    return {word: n for n, word in enumerate(words)}


def table(vocab: dict[str, int]) -> list[list[float]]:
    """One row per token: a topic's words on its axis (each a little apart), common words
    small and off every axis, the special tokens zero."""
    topics = list(TOPICS)
    dim = len(topics) + 4
    rows = [[0.0] * dim for _ in vocab]
    for axis, name in enumerate(topics):
        for n, word in enumerate(TOPICS[name]):
            row = rows[vocab[word]]
            row[axis] = 1.0
            row[len(topics) + n % 4] = 0.15
    for n, word in enumerate(COMMON):
        row = rows[vocab[word]]
        row[len(topics) + n % 4] = 0.1
        row[len(topics) + (n + 1) % 4] = 0.05
    return rows


def make_model(folder: Path) -> Path:
    """Write the model's files into `folder` (made if need be); return it."""
    import onnx
    from onnx import TensorProto, helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    folder.mkdir(parents=True, exist_ok=True)
    vocab = vocabulary()
    rows = table(vocab)
    dim = len(rows[0])

    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.save(str(folder / "tokenizer.json"))
    files = {
        "tokenizer_config.json": {"model_max_length": 128, "pad_token": "[PAD]"},
        "special_tokens_map.json": {
            "pad_token": "[PAD]",
            "unk_token": "[UNK]",
            "cls_token": "[CLS]",
            "sep_token": "[SEP]",
        },
        "config.json": {"hidden_size": dim, "pad_token_id": vocab["[PAD]"]},
    }
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content), encoding="utf-8")

    flat = [x for row in rows for x in row]
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["words", "input_ids"], ["word_rows"]),
            helper.make_node("Gather", ["types", "token_type_ids"], ["type_rows"]),
            helper.make_node("Add", ["word_rows", "type_rows"], ["rows"]),
            helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", ["mask", "last_axis"], ["mask3"]),
            helper.make_node("Mul", ["rows", "mask3"], ["last_hidden_state"]),
        ],
        "tiny_topics",
        [
            helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
            for name in ("input_ids", "attention_mask", "token_type_ids")
        ],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", dim]
            )
        ],
        initializer=[
            helper.make_tensor("words", TensorProto.FLOAT, [len(rows), dim], flat),
            helper.make_tensor("types", TensorProto.FLOAT, [2, dim], [0.0] * (2 * dim)),
            helper.make_tensor("last_axis", TensorProto.INT64, [1], [-1]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return folder
