from sidebar import sidebar
from textstats import top_words, words


def test_accented_words_stay_whole():
    assert words("Le café et le thé. Café!") == ["le", "café", "et", "le", "thé", "café"]
    assert top_words("Le café et le thé. Café!", 2) == [("café", 2), ("le", 2)]


def test_other_alphabets():
    assert words("naïve façade, Ærø über Straße") == ["naïve", "façade", "ærø", "über", "straße"]
    assert words("Привет, мир") == ["привет", "мир"]


def test_apostrophes_with_accents():
    assert words("L'été s'achève") == ["l'été", "s'achève"]


def test_still_no_digits_or_underscores():
    assert words("année 2024 snake_case") == ["année", "snake", "case"]


def test_sidebar_french():
    assert sidebar("élan élan été", 1) == "3 words, 1 min read\nélan: 2"
