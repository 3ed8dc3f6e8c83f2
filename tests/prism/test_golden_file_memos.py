"""Golden tests for what a query remembers per file rather than per line: a module-level name read from inside
functions, a name only a star import provides, a receiver whose head no function binds. Each file reads the same
receiver text from functions where it means different things (shadowed by a local, by an enclosing function's
local, declared ``global``, a class attribute a method does not see), in an order where a remembered answer
would leak from one function into the next.
"""

from __future__ import annotations

MODELS = """
    class Book:
        def save(self):  # refs: def
            pass


    class Other:
        def save(self):
            pass
"""


def test_a_name_read_from_functions_is_the_module_binding_only_where_none_shadows_it(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "models.py": MODELS,
        "use.py": """
            from models import Book, Other


            def a():
                Book().save()  # refs: confirmed


            def b():
                Book = Other
                Book().save()


            def c():
                Book().save()  # refs: confirmed


            def d():
                global Book
                Book().save()  # refs: confirmed


            class K:
                Book = Other

                def m(self):
                    Book().save()  # refs: confirmed


            def e():
                def inner():
                    Book().save()
                Book = Other
                return inner


            def f(Book):
                Book().save()  # refs: ambiguous(untyped receiver)


            def g():
                Book().save()  # refs: confirmed
        """,
    }, "models.Book.save")


def test_a_star_import_provides_a_name_only_where_nothing_else_binds_it(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "models.py": MODELS,
        "star.py": """
            from models import *


            def a():
                Book().save()  # refs: confirmed


            def b():
                Book = Other
                Book().save()


            def c():
                Book().save()  # refs: confirmed
                Missing().save()  # refs: ambiguous(untyped receiver)
        """,
    }, "models.Book.save")
