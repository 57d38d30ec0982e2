import pytest
from hypothesis import given, settings, strategies as st

from core.knowledge.chunking import MAX_CHARS, OVERLAP, chunk_qa, chunk_text


def sentence(n: int, word: str = "palabra") -> str:
    return " ".join([word] * n) + "."


@pytest.mark.parametrize(
    "text, expected_chunks",
    [
        ("", 0),
        ("   \n\n  ", 0),
        ("Una frase corta.", 1),
        ("Párrafo uno.\n\nPárrafo dos.", 1),  # both fit: one chunk
        ("\n\n".join([sentence(150)] * 3), 3),  # 3 paragraphs of ~1,200 chars: one each
    ],
)
def test_chunk_counts(text, expected_chunks):
    assert len(chunk_text(text)) == expected_chunks


def test_paragraph_that_fits_stays_whole():
    paragraphs = [sentence(100, "alfa"), sentence(100, "beta"), sentence(100, "gamma")]
    chunks = chunk_text("\n\n".join(paragraphs))
    for paragraph in paragraphs:
        assert any(paragraph in c.text for c in chunks)


def test_long_paragraph_is_cut_between_sentences():
    text = " ".join(f"Frase número {i} con algo de texto para llenar espacio." for i in range(80))
    chunks = chunk_text(text)
    assert len(chunks) > 1
    for chunk in chunks[:-1]:
        assert chunk.text.rstrip().endswith(".")


def test_neighbours_overlap_about_200_chars():
    text = " ".join(f"Frase número {i} con algo de texto para llenar espacio." for i in range(120))
    chunks = chunk_text(text)
    for left, right in zip(chunks, chunks[1:]):
        overlap = left.end - right.start
        assert 100 <= overlap <= 300


def test_fact_on_a_boundary_is_found_from_both_sides():
    text = " ".join(f"Frase {i} de relleno para el documento." for i in range(200))
    chunks = chunk_text(text)
    boundary = chunks[0].end
    fact = text[boundary - 60: boundary]
    assert fact in chunks[0].text and fact in chunks[1].text


def test_qa_pair_is_one_piece_when_it_fits():
    [chunk] = chunk_qa("¿Plazo de devolución?", "30 días naturales desde la entrega.")
    assert chunk.text == "¿Plazo de devolución?\n30 días naturales desde la entrega."


def test_long_qa_pair_is_split_like_text():
    chunks = chunk_qa("¿Pregunta?", " ".join(["Respuesta larga con detalle."] * 120))
    assert len(chunks) > 1 and all(len(c.text) <= MAX_CHARS for c in chunks)


def test_word_longer_than_a_chunk_is_cut():
    chunks = chunk_text("x" * 4000)
    assert [len(c.text) for c in chunks][:2] == [MAX_CHARS, MAX_CHARS]


def test_deterministic():
    text = " ".join(f"Frase {i}." for i in range(1000))
    assert chunk_text(text) == chunk_text(text)


words = st.text(alphabet=st.sampled_from("abcdeéñ xyz"), min_size=1, max_size=30)
pieces = st.lists(
    st.one_of(words, st.just(". "), st.just("\n\n"), st.just("\n"), st.just("? "), st.text(min_size=0, max_size=400)),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(pieces, st.integers(min_value=50, max_value=2000), st.integers(min_value=0, max_value=400))
def test_properties(parts, max_chars, overlap):
    text = "".join(parts)
    chunks = chunk_text(text, max_chars=max_chars, overlap=overlap)
    covered = [False] * len(text)
    for chunk in chunks:
        assert chunk.text == text[chunk.start: chunk.end]
        assert 0 < len(chunk.text) <= max_chars  # never over the limit
        for i in range(chunk.start, chunk.end):
            covered[i] = True
    # every non-blank character of the source is in some chunk
    assert all(covered[i] for i, ch in enumerate(text) if not ch.isspace())
    # chunks advance and neighbours overlap by at most the overlap asked (plus a sentence's slack)
    for left, right in zip(chunks, chunks[1:]):
        assert right.start > left.start and right.end > left.end
        assert left.end - right.start <= max(overlap, 0) * 3 // 2 + 1


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet="abc def.", min_size=1, max_size=120), min_size=1, max_size=40))
def test_overlap_is_near_the_target_when_units_are_small(sentences):
    text = " ".join(s.strip() + "." for s in sentences if s.strip())
    chunks = chunk_text(text, max_chars=600, overlap=OVERLAP)
    for left, right in zip(chunks, chunks[1:]):
        assert left.end - right.start >= 0
