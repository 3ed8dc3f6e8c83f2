// The console's only script: log out, pick or start a conversation, and stream the assistant's reply.
// Everything that came from the server is inserted as text (textContent), never as HTML.
"use strict";
(function () {
  const chat = document.getElementById("chat");
  const messages = document.getElementById("messages");
  const form = document.getElementById("composer");
  const prompt = document.getElementById("prompt");
  const send = document.getElementById("send");
  const usage = document.getElementById("usage");
  let csrf = "";
  let conversation = chat ? chat.dataset.conversation || "" : "";
  let assistantOn = !!(send && !send.disabled);

  async function me() {
    const r = await fetch("/v1/web/me", { credentials: "same-origin" });
    if (r.status === 401) { location.href = "/"; return; }
    const body = await r.json();
    csrf = body.csrf_token;
    assistantOn = body.assistant.enabled;
  }
  const ready = me();

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function add(node) {
    const empty = document.getElementById("empty");
    if (empty) empty.remove();
    messages.appendChild(node);
    messages.scrollTop = messages.scrollHeight;
    return node;
  }
  function toolRow(name, args, summary, cls) {
    const row = el("div", "row tool" + (cls ? " " + cls : ""));
    row.appendChild(el("span", "tool-name", name));
    row.appendChild(el("span", "tool-args", JSON.stringify(args || {}).slice(0, 300)));
    row.appendChild(el("span", "tool-sum", summary || ""));
    return add(row);
  }

  document.getElementById("logout").addEventListener("click", async () => {
    await ready;
    await fetch("/v1/web/logout", { method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrf } });
    location.href = "/";
  });

  const pick = document.getElementById("conv-pick");
  pick.addEventListener("change", () => { location.href = pick.value ? "/?c=" + encodeURIComponent(pick.value) : "/"; });

  prompt.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); form.requestSubmit(); }
  });

  let busy = false;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = prompt.value.trim();
    if (!text || busy || !assistantOn) return;
    busy = true; send.disabled = true; prompt.value = "";
    await ready;
    add(el("div", "msg user", text));
    let bubble = null;
    try {
      const r = await fetch("/v1/web/assistant", {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify({ message: text, conversation_id: conversation || null }),
      });
      if (!r.ok) {
        let detail = r.statusText;
        try { detail = (await r.json()).detail; } catch (_) { /* not JSON */ }
        add(el("div", "row event error", String(detail)));
        return;
      }
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const chunk = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          let name = "message", data = "";
          for (const line of chunk.split("\n")) {
            if (line.startsWith("event: ")) name = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          const d = data ? JSON.parse(data) : {};
          if (name === "conversation") {
            if (conversation !== d.id) {
              const option = el("option", "", d.title || "(untitled)");
              option.value = d.id;
              pick.insertBefore(option, pick.options[1] || null);
              pick.value = d.id;
            }
            conversation = d.id; chat.dataset.conversation = d.id;
            history.replaceState(null, "", "/?c=" + encodeURIComponent(d.id));
          } else if (name === "text") {
            if (!bubble) bubble = add(el("div", "msg assistant", ""));
            bubble.textContent += d.text;
            messages.scrollTop = messages.scrollHeight;
          } else if (name === "tool") {
            bubble = null; toolRow(d.name, d.args, d.summary, d.ok ? "" : "failed");
          } else if (name === "refused") {
            bubble = null; toolRow(d.name, {}, d.reason, "refused");
          } else if (["capped", "truncated", "limit", "notice"].includes(name)) {
            add(el("div", "row event " + name, d.text));
          } else if (name === "error") {
            add(el("div", "row event error", d.text + (d.hint ? " (" + d.hint + ")" : "")));
          } else if (name === "usage") {
            usage.textContent = "Tokens: " + d.input_tokens.toLocaleString() + " in, " + d.output_tokens.toLocaleString() + " out";
          } else if (name === "answer") {
            if (bubble) bubble.classList.add("final");
          }
        }
      }
    } catch (err) {
      add(el("div", "row event error", "The connection broke: " + err + ". What was said is saved; reload to see it."));
    } finally {
      busy = false; send.disabled = !assistantOn; prompt.focus();
    }
  });
})();
