from datetime import date

from blog.permalinks import archive_links, permalink
from blog.slugs import slugify


def test_slugify_basics():
    assert slugify("Hello, Wörld!") == "hello-world"
    assert slugify("  --Python 3.12 -- released  ") == "python-3-12-released"


def test_slugify_empty_title():
    assert slugify("???") == "untitled"


def test_slugify_cuts_at_word_boundary():
    assert slugify("one two three four", max_length=10) == "one-two"


def test_permalink():
    assert permalink("Hello World", date(2024, 3, 5)) == "/2024/03/05/hello-world/"


def test_archive_newest_first():
    posts = [("Old", date(2023, 1, 1)), ("New", date(2024, 1, 1))]
    assert archive_links(posts) == ["/2024/01/01/new/", "/2023/01/01/old/"]
