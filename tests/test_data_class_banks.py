"""Offline class banks of the categorical real-feature study (arXiv:2405.17248 §5.4): scikit-learn digits and
``countryinfo`` sentences labelled by sub-region (``iclab.data.digits_features``, ``country_sentences``)."""

from iclab.data import country_sentences, digits_features


def test_digits_features():
    x, y, names = digits_features()
    assert x.shape == (1797, 64) and y.shape == (1797,) and names == [str(c) for c in range(10)]
    assert set(y.tolist()) == set(range(10)) and float(x.min()) == 0 and float(x.max()) == 16


def test_country_sentences_by_subregion():
    sents, labels, names = country_sentences(7)
    assert (sents, labels, names) == country_sentences(7) and len(sents) == len(labels)
    assert names == sorted(names) and set(labels) == set(range(len(names))) and len(names) > 10
    assert max(labels.count(c) for c in set(labels)) <= 7
    assert any(s.startswith("The capital of ") for s in sents)
