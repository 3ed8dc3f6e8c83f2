"""The assistant's code tools are prism queries on one of the tenant's workspaces, usable without a model through the
ordinary routes too; a workspace is named by the caller's tenant's names only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from web_support import PASSWORD, login, sse

from tomo.models.scripted import ScriptedModel
from tomo.store.console import ConsoleStore


def test_prism_queries_on_the_tenants_workspace(store: ConsoleStore, tmp_path: Path, serve: Any) -> None:
    store.add_user("ann@acme.example", PASSWORD, "acme")
    store.add_user("bob@bolt.example", PASSWORD, "bolt")
    shop, other = tmp_path / "shop", tmp_path / "other"
    for repo in (shop, other):
        repo.mkdir()
    (shop / "cart.py").write_text("class Cart:\n    def total(self):\n        return 0\n\n\n"
                                  "def checkout(cart: Cart):\n    return cart.total()\n")
    (other / "secret.py").write_text("class Cart:\n    pass\n")
    ws = store.add_workspace("acme", shop)
    theirs = store.add_workspace("bolt", other, name="other")
    model = ScriptedModel([
        {"tool_calls": [{"name": "callers", "args": {"workspace": "shop", "symbol": "cart.Cart.total"}},
                        {"name": "find_symbol", "args": {"workspace": "other", "query": "Cart"}}]},
        {"content": "checkout calls it."},
    ])
    server = serve(store, model_factory=lambda: model)
    with server.client() as client:
        csrf = login(client, "ann@acme.example")
        found = client.get(f"/v1/web/workspaces/{ws.id}/symbols", params={"q": "Cart"}).json()
        assert [(s["qualname"], s["path"], s["line"]) for s in found] == [("cart.Cart", "cart.py", 1)]
        assert client.get(f"/v1/web/workspaces/{theirs.id}/symbols", params={"q": "Cart"}).status_code == 404
        events = sse(client.post("/v1/web/assistant", json={"message": "who calls Cart.total?"},
                                 headers={"X-CSRF-Token": csrf}).text)
    tools = [d for e, d in events if e == "tool"]
    assert [(t["name"], t["ok"]) for t in tools] == [("callers", True), ("find_symbol", False)]
    callers, refused_ws = model.sent[1][-2], model.sent[1][-1]
    assert '"caller": "cart.checkout"' in callers.content
    assert "there is no workspace 'other'" in refused_ws.content and "your workspaces: shop" in refused_ws.content
