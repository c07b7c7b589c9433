from array import array

import pytest

from extlib.chunking import chunk_text, decode_span, encode_long, fixed_chunks, truncate_ids, truncate_text
from extlib.testing import ByteTokenizer

TOK = ByteTokenizer()


def test_truncate_front_keeps_the_first_tokens():
    assert truncate_ids(array("i", range(10)), 4, "front").tolist() == [0, 1, 2, 3]


def test_truncate_middle_keeps_both_ends():
    assert truncate_ids(array("i", range(10)), 5, "middle").tolist() == [0, 1, 7, 8, 9]


def test_truncate_shorter_input_is_unchanged_and_bad_args_are_rejected():
    assert truncate_ids(array("i", range(3)), 5).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="truncate side"):
        truncate_ids(array("i", range(3)), 2, "end")
    with pytest.raises(ValueError, match="positive"):
        truncate_ids(array("i", range(3)), 0)


def test_fixed_chunks_have_the_requested_size_and_cover_the_text():
    text = "abcdefghij" * 10
    chunks = fixed_chunks(TOK, encode_long(TOK, text), 30)
    assert [len(c) for c in chunks] == [30, 30, 30, 10]
    assert "".join(chunks) == text


def test_overlap_repeats_the_tail_of_the_previous_chunk():
    chunks = fixed_chunks(TOK, encode_long(TOK, "0123456789"), 4, overlap=2)
    assert chunks == ["0123", "2345", "4567", "6789"]
    with pytest.raises(ValueError, match="overlap"):
        fixed_chunks(TOK, encode_long(TOK, "0123"), 4, overlap=4)


def test_chinese_characters_split_across_tokens_are_neither_lost_nor_doubled():
    text = "长文本问答任务，你负责处理其中一个文本块。" * 7  # 3 bytes a character
    for size in (4, 5, 7, 64):
        chunks = fixed_chunks(TOK, encode_long(TOK, text), size)
        assert "".join(chunks) == text
        assert all("\ufffd" not in c for c in chunks)


def test_decode_span_of_the_whole_input_round_trips():
    text = "naïve café — 東京 🚀 done"
    ids = encode_long(TOK, text)
    assert decode_span(TOK, ids, 0, len(ids)) == text


def test_encode_long_matches_encoding_in_one_piece_for_a_long_text():
    text = ("A line of text with words.\n" * 8000) + "end"
    assert encode_long(TOK, text).tolist() == TOK.encode(text)


def test_chunk_text_truncates_then_chunks():
    chunks = chunk_text("x" * 100 + "y" * 100, TOK, chunk_tokens=20, input_tokens=40, truncate="middle")
    assert chunks == ["x" * 20, "y" * 20]


def test_paragraph_chunks_keep_paragraphs_whole():
    paragraphs = [f"Paragraph {i} " + "word " * 5 for i in range(6)]
    chunks = chunk_text("\n\n".join(paragraphs), TOK, chunk_tokens=80, paragraphs=True)
    assert len(chunks) == 3
    for chunk in chunks:
        assert len(chunk.encode()) <= 80
        assert all(p.strip() in chunk for p in chunk.split("\n"))
    assert all(p.strip() in "\n".join(chunks) for p in paragraphs)


def test_paragraph_longer_than_a_chunk_is_split():
    chunks = chunk_text("short\n\n" + "z" * 50, TOK, chunk_tokens=20, paragraphs=True)
    assert chunks == ["short", "z" * 20, "z" * 20, "z" * 10]


def test_truncate_text():
    assert truncate_text("abcdefgh", TOK, 4, "front") == "abcd"
    assert truncate_text("abcdefgh", TOK, 4, "middle") == "abgh"


def test_truncation_never_cuts_inside_a_character():
    text = "长文本问答任务你负责处理其中一个文本块" * 3
    for n in range(4, 40):
        for side in ("front", "middle"):
            kept = truncate_text(text, TOK, n, side)
            assert "\ufffd" not in kept and len(kept.encode()) <= n and len(kept.encode()) >= n - 6
            chunks = chunk_text(text, TOK, chunk_tokens=5, input_tokens=n, truncate=side)
            assert "".join(chunks) == kept
