import pytest

from extlib.chunking import chunk_text
from extlib.tokenizer import HFTokenizer, _byte_alphabet, load_tokenizer

TEXT = "长文本问答任务，你负责处理其中一个文本块。Long-text QA: each agent reads one chunk. " * 20


@pytest.fixture(scope="module")
def byte_level_bpe(tmp_path_factory):
    """A small byte-level BPE trained here, shaped like Qwen's and Llama 3's tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([TEXT], trainer)
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tok.save(str(path))
    return path


def test_byte_alphabet_is_a_bijection():
    mapping = _byte_alphabet()
    assert sorted(mapping) == list(range(256)) and len(set(mapping.values())) == 256


def test_hf_byte_level_chunks_rejoin_to_the_text(byte_level_bpe):
    tok = load_tokenizer(f"hf:{byte_level_bpe}")
    assert isinstance(tok, HFTokenizer)
    ids = tok.encode(TEXT)
    assert tok.decode_bytes(ids).decode() == TEXT
    for size in (3, 7, 50):
        chunks = chunk_text(TEXT, tok, chunk_tokens=size)
        assert "".join(chunks) == TEXT and all("\ufffd" not in c for c in chunks)


@pytest.mark.parametrize("spec, message", [("hf:/no/such/tokenizer.json", "not found"),
                                           ("gguf:/no/such.gguf", "not found"), ("sentencepiece:x", "unknown"),
                                           ("gguf", "use gguf:PATH")])
def test_bad_tokenizer_specs(spec, message):
    with pytest.raises(ValueError, match=message):
        load_tokenizer(spec)
