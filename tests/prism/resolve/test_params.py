"""Golden tests of resolve/params.py: parameters typed from a decorator, an overridden method, or every caller."""

from __future__ import annotations

from .projects import CALL_DECOY, DECOY


def test_the_class_of_self_and_functions_kept_as_static_methods(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "cap.py": """
            from decoy import Decoy

            class MultiCapture:
                def readouterr(self):  # refs: def
                    return ""

            def std_capture() -> MultiCapture:
                return MultiCapture()

            def decoy_capture() -> Decoy:
                return Decoy()

            class TestStd:
                captureclass = staticmethod(std_capture)
                decoyclass = staticmethod(decoy_capture)
                unknownclass = staticmethod(lambda: None)

                def test_read(self):
                    cap = self.__class__.captureclass()
                    cap.readouterr()  # refs: confirmed
                    self.__class__.decoyclass().readouterr()
                    self.captureclass().readouterr()  # refs: confirmed
                    self.__class__.unknownclass().readouterr()  # refs: ambiguous(untyped receiver)
        """,
        "decoy.py": CALL_DECOY,
    }, "cap.MultiCapture.readouterr")


def test_sends_subscripts_type_comments_and_private_callees(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "app.py": """
            from typing import Generator
            from decoy import Decoy

            class Result:
                def run(self):  # refs: def
                    return 1

            def wrapper() -> Generator[None, Result, None]:
                outcome = yield
                outcome.run()  # refs: confirmed

            def untyped_wrapper():
                outcome = yield
                outcome.run()  # refs: ambiguous(untyped receiver)

            class Schema:
                def __init__(self):
                    self.fields = {}  # type: dict[str, Result]
                    self.others = {}  # type: dict[str, Decoy]
                    self.results: list[Result] = []

                def go(self, store: Result, other: Decoy):
                    self.fields["x"].run()  # refs: confirmed
                    self.others["x"].run()
                    self.results[0].run()  # refs: confirmed
                    self._keep(store=store)
                    self._mixed(store)
                    self._mixed(other)
                    self.public(store)

                @staticmethod
                def _keep(*, store):
                    store.run()  # refs: confirmed

                def _mixed(self, thing):
                    thing.run()  # refs: ambiguous(untyped receiver)

                def public(self, thing):
                    thing.run()  # refs: ambiguous(untyped receiver)
        """,
        "decoy.py": CALL_DECOY,
    }, "app.Result.run")


def test_parameters_typed_by_a_decorator_or_an_overridden_method(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "db.py": """
            from typing import Callable, Concatenate, ParamSpec, TypeVar
            from decoy import Decoy

            R = TypeVar("R")
            P = ParamSpec("P")

            class Session:
                def start(self):  # refs: def
                    return 1

            def with_session(fn: Callable[[Session], R]) -> Callable[[], R]:
                def inner():
                    return fn(Session())
                return inner

            def pass_session(fn: Callable[Concatenate[Session, P], R]) -> Callable[P, R]:
                return fn

            def make_decoy() -> Decoy:
                return Decoy()

            @pass_session
            def made(sess) -> Session:
                sess.start()  # refs: confirmed
                return sess

            made().start()  # refs: confirmed

            def with_decoy(fn: Callable[[Decoy], R]) -> Callable[[], R]:
                def inner():
                    return fn(Decoy())
                return inner

            @with_session
            def work(sess):
                sess.start()  # refs: confirmed

            @with_decoy
            def other(sess):
                sess.start()

            class Handler:
                def handle(self, req: Session, extra: Decoy):
                    return req

            class Sub(Handler):
                def handle(self, req, extra):
                    req.start()  # refs: confirmed
                    extra.start()

            class SubSub(Sub):
                def handle(self, req, extra):
                    req.start()  # refs: confirmed
        """,
        "decoy.py": DECOY,
    }, "db.Session.start")


def test_defaults_and_annotations_read_the_enclosing_scope(golden) -> None:  # type: ignore[no-untyped-def]
    # missing these broke the code a rename left behind: `def f(helper=helper)` then named nothing
    golden({
        "m.py": """
            class Engine:  # refs: def
                pass

            def helper(x):
                return x

            def f(helper=helper, Engine: Engine = None) -> Engine:  # refs: confirmed, confirmed
                return helper(Engine)

            def g(Engine):
                return Engine
        """,
    }, "m.Engine")


def test_a_default_named_like_its_parameter_is_the_outer_function(golden) -> None:  # type: ignore[no-untyped-def]
    golden({
        "m.py": """
            def helper(x):  # refs: def
                return x

            def f(helper=helper):  # refs: confirmed
                return helper(1)
        """,
    }, "m.helper")
