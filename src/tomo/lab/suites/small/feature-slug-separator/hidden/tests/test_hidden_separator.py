from datetime import date

from blog.permalinks import archive_links, permalink
from blog.slugs import slugify


def test_slugify_separator():
    assert slugify("Hello, Wörld!", separator="_") == "hello_world"
    assert slugify("  --Python 3.12 -- released  ", separator="_") == "python_3_12_released"
    assert slugify("a b c", separator=".") == "a.b.c"


def test_slugify_default_unchanged():
    assert slugify("Hello, Wörld!") == "hello-world"
    assert slugify("one two three four", max_length=10) == "one-two"


def test_permalink_separator():
    assert permalink("Hello World", date(2024, 3, 5), separator="_") == "/2024/03/05/hello_world/"
    assert permalink("Hello World", date(2024, 3, 5)) == "/2024/03/05/hello-world/"


def test_permalink_separator_positional():
    assert permalink("Big News", date(2024, 12, 31), "_") == "/2024/12/31/big_news/"


def test_archive_unchanged():
    assert archive_links([("A b", date(2024, 1, 2))]) == ["/2024/01/02/a-b/"]
