"""The one-layer GD language model of arXiv:2405.17248 (docs/papers/categorical.md §3.8), its transformer baseline
and the character corpus they train on (§5.5): shapes, causality, the parameter count, the corpus splits."""

import torch

from iclab.data import CharCorpus, generator_for, pydoc_text
from iclab.models import GDLanguageModel, OneHotLM


def test_output_at_t_ignores_later_tokens():
    torch.manual_seed(0)
    for model in (GDLanguageModel(11, 6, 2, 7), GDLanguageModel(11, 6, 2, 7, ff=True), OneHotLM(11, 6, 2, 7)):
        tokens = torch.randint(11, (3, 7))
        later = tokens.clone()
        later[:, 4:] = (later[:, 4:] + 1) % 11
        a, b = model(tokens), model(later)
        assert a.shape == (3, 7, 11)
        torch.testing.assert_close(a[:, :4], b[:, :4])
        assert not torch.allclose(a[:, 4:], b[:, 4:])


def test_gd_model_attention_parameters_are_the_head_diagonals():
    m = GDLanguageModel(13, 8, 4, 5)
    assert m.w_h.shape == (4, 8)
    torch.testing.assert_close(m.w_h, torch.ones(4, 8))  # W_q = W_k = I at initialisation


def test_char_corpus_splits_and_windows():
    text = pydoc_text()
    tr = CharCorpus(text, 9, "train")
    te = CharCorpus(text, 9, "test", vocab=tr.vocab)
    assert tr.vocab[0] == "\0" and len(tr.ids) + len(te.ids) == len(text)
    assert len(tr.ids) == int(0.9 * len(text))
    b = tr.sample(5, generator_for(0, "t"))
    assert b.tokens.shape == (5, 10) and int(b.tokens.max()) < len(tr.vocab)
    assert torch.equal(b.tokens, tr.sample(5, generator_for(0, "t")).tokens)
    assert b.index(slice(0, 2)).tokens.shape == (2, 10)
