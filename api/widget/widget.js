/*! Cobertura chat widget — one static file, no dependencies.
 *
 * Embed:
 *   <script src="https://HOST/widget.js" data-site-key="pk_..." defer></script>
 * Optional attributes: data-api, data-customer-token, data-title, data-lang (es|pt|en), data-accent.
 * Labels follow the language of the last answer (done.language), before the first one the page's (data-lang,
 * <html lang>, the browser's). An answer's text streams as plain text and is then shown from its `rendered` HTML,
 * copied into the page through an allowlist of tags (never inserted as it came).
 *
 * Public API (the only global): window.Cobertura = { open(), close(), toggle(), ask(text), reset(), ... }
 */
(function () {
  "use strict";

  if (window.Cobertura && window.Cobertura.__cobertura) return; // pasted twice: keep the first one

  // ---------------------------------------------------------------- configuration

  var script = document.currentScript;
  if (!script || !script.getAttribute || !script.hasAttribute("data-site-key")) {
    // currentScript is null when executed from a module or after the fact: find our tag by its attribute
    var tags = document.querySelectorAll("script[data-site-key]");
    var found = null;
    for (var i = 0; i < tags.length; i++) {
      if (/widget(\.min)?\.js(\?|#|$)/.test(tags[i].src || "")) { found = tags[i]; break; }
    }
    script = found || (tags.length ? tags[tags.length - 1] : script);
  }
  function attr(name, fallback) {
    var v = script && script.getAttribute ? script.getAttribute(name) : null;
    v = v == null ? "" : String(v).trim();
    return v || fallback;
  }

  var SITE_KEY = attr("data-site-key", "");
  var CUSTOMER_TOKEN = attr("data-customer-token", "");
  var API = (function () {
    var base = attr("data-api", "");
    if (!base) {
      try { base = new URL(script && script.src ? script.src : location.href, location.href).origin; }
      catch (e) { base = location.origin; }
    }
    return base.replace(/\/+$/, "");
  })();
  /** One of the languages the widget speaks (those the product writes its messages in); English otherwise. */
  function speaks(code) {
    var raw = String(code || "").toLowerCase().slice(0, 2);
    return raw === "es" || raw === "pt" || raw === "en" ? raw : "en";
  }
  // the host page's language first (a Spanish shop gets a Spanish widget), then the browser's
  var LANG = speaks(attr("data-lang", "") || document.documentElement.lang || navigator.language || "en");
  var TITLE = attr("data-title", ""); // empty: the localized "Help"
  var ACCENT = (function () {
    var v = attr("data-accent", "#2563eb");
    var ok = !/[;{}<>\\"'`]/.test(v) && (!window.CSS || !CSS.supports || CSS.supports("color", v));
    return ok ? v : "#2563eb";
  })();

  var STRINGS = {
    es: {
      title: "Ayuda", open: "Abrir el chat de ayuda", close: "Cerrar", placeholder: "Escribe tu pregunta…", send: "Enviar",
      inputLabel: "Tu mensaje", messages: "Conversación", thinking: "Escribiendo…", searching: "Buscando en la ayuda…",
      truncated: "La respuesta se cortó y puede estar incompleta.", approve: "Aprobar", reject: "Rechazar",
      staff: "Persona del equipo", retry: "Reintentar", network: "No se pudo conectar. Revisa tu conexión e inténtalo de nuevo.",
      error: "Algo salió mal. Inténtalo de nuevo.", sources: "Fuentes", expires: "Caduca", empty: "¿En qué podemos ayudarte?",
      you: "Tú", assistant: "Asistente", newMessage: "Nuevo mensaje", goTo: "Ver en la página",
      tooLong: "El mensaje es demasiado largo.", rateLimited: "Demasiados mensajes seguidos. Espera un momento.",
      badKey: "El chat no está disponible en este sitio.", sent: "Hecho.",
      handoffNote: "Una persona del equipo te responderá aquí: mantén esta página abierta.",
      feedbackAsk: "¿Te ha servido esta respuesta?", feedbackUp: "Sí, me ha servido", feedbackDown: "No me ha servido",
      feedbackReason: "¿Qué faltaba o estaba mal? (opcional)", feedbackSend: "Enviar opinión",
      feedbackThanks: "Gracias por tu opinión.",
      cardExecuted: "Hecho: el cambio se ha aplicado.", cardRejected: "Rechazado: no se ha cambiado nada.",
      cardExpired: "Caducado: no se ha cambiado nada. Vuelve a pedirlo si aún lo necesitas.",
      cardRefused: "No se ha aplicado y no se ha cambiado nada.",
      cardFailed: "No se ha podido completar: el sistema respondió con un error.", cardWorking: "Un momento…",
      bookingTitle: "Elige una hora", bookingZone: "Horas en", bookingHoldNote: "Al elegir una hora te la guardamos {n} min para que la confirmes.",
      bookingNone: "No quedan horas libres en estas fechas. Pide otro día en el chat.", bookingSlot: "Reservar",
      bookingHeld: "Guardada para ti: quedan {t} para confirmarla.", bookingName: "Nombre", bookingEmail: "Correo electrónico",
      bookingPhone: "Teléfono (opcional)", bookingConfirm: "Confirmar cita", bookingCancel: "Cancelar",
      bookingTaken: "Esa hora ya no está libre. Estas siguen libres ese día:",
      bookingTakenNone: "Esa hora ya no está libre y no quedan otras ese día. Pide otro día en el chat.",
      bookingExpired: "Se acabó el tiempo para confirmar. Elige una hora otra vez.",
      bookingReleased: "Hora liberada. Puedes elegir otra.", bookingGone: "Esa hora ya no está guardada para ti. Elige una hora otra vez.",
      bookingDone: "Cita confirmada", bookingCode: "Código", bookingMissing: "Falta:", bookingCheck: "Revisa:",
      fieldName: "nombre", fieldEmail: "correo electrónico", fieldPhone: "teléfono"
    },
    pt: {
      title: "Ajuda", open: "Abrir o chat de ajuda", close: "Fechar", placeholder: "Escreva a sua pergunta…", send: "Enviar",
      inputLabel: "A sua mensagem", messages: "Conversa", thinking: "A escrever…", searching: "A pesquisar na ajuda…",
      truncated: "A resposta foi cortada e pode estar incompleta.", approve: "Aprovar", reject: "Rejeitar",
      staff: "Pessoa da equipa", retry: "Tentar novamente", network: "Não foi possível ligar. Verifique a ligação e tente novamente.",
      error: "Algo correu mal. Tente novamente.", sources: "Fontes", expires: "Expira", empty: "Como podemos ajudar?",
      you: "Você", assistant: "Assistente", newMessage: "Nova mensagem", goTo: "Ver na página",
      tooLong: "A mensagem é demasiado longa.", rateLimited: "Demasiadas mensagens seguidas. Aguarde um momento.",
      badKey: "O chat não está disponível neste site.", sent: "Feito.",
      handoffNote: "Uma pessoa da equipa vai responder aqui: mantenha esta página aberta.",
      feedbackAsk: "Esta resposta foi útil?", feedbackUp: "Sim, foi útil", feedbackDown: "Não foi útil",
      feedbackReason: "O que faltou ou estava errado? (opcional)", feedbackSend: "Enviar opinião",
      feedbackThanks: "Obrigado pela sua opinião.",
      cardExecuted: "Feito: a alteração foi aplicada.", cardRejected: "Rejeitado: nada foi alterado.",
      cardExpired: "Expirado: nada foi alterado. Peça de novo se ainda precisar.",
      cardRefused: "Não foi aplicado e nada foi alterado.",
      cardFailed: "Não foi possível concluir: o sistema respondeu com um erro.", cardWorking: "Um momento…",
      bookingTitle: "Escolha um horário", bookingZone: "Horários em", bookingHoldNote: "Ao escolher um horário, guardamo-lo {n} min para o confirmar.",
      bookingNone: "Não há horários livres nestas datas. Peça outro dia no chat.", bookingSlot: "Marcar",
      bookingHeld: "Guardado para si: faltam {t} para o confirmar.", bookingName: "Nome", bookingEmail: "E-mail",
      bookingPhone: "Telefone (opcional)", bookingConfirm: "Confirmar marcação", bookingCancel: "Cancelar",
      bookingTaken: "Esse horário já não está livre. Estes continuam livres nesse dia:",
      bookingTakenNone: "Esse horário já não está livre e não há outros nesse dia. Peça outro dia no chat.",
      bookingExpired: "O tempo para confirmar acabou. Escolha um horário outra vez.",
      bookingReleased: "Horário libertado. Pode escolher outro.", bookingGone: "Esse horário já não está guardado para si. Escolha um horário outra vez.",
      bookingDone: "Marcação confirmada", bookingCode: "Código", bookingMissing: "Falta:", bookingCheck: "Verifique:",
      fieldName: "nome", fieldEmail: "e-mail", fieldPhone: "telefone"
    },
    en: {
      title: "Help", open: "Open the help chat", close: "Close", placeholder: "Type your question…", send: "Send",
      inputLabel: "Your message", messages: "Conversation", thinking: "Typing…", searching: "Searching the help center…",
      truncated: "The answer was cut off and may be incomplete.", approve: "Approve", reject: "Reject",
      staff: "Team member", retry: "Retry", network: "Could not connect. Check your connection and try again.",
      error: "Something went wrong. Please try again.", sources: "Sources", expires: "Expires", empty: "How can we help?",
      you: "You", assistant: "Assistant", newMessage: "New message", goTo: "Show on the page",
      tooLong: "The message is too long.", rateLimited: "Too many messages in a row. Please wait a moment.",
      badKey: "The chat is not available on this site.", sent: "Done.",
      handoffNote: "A person from the team will reply here: keep this page open.",
      feedbackAsk: "Was this answer helpful?", feedbackUp: "Yes, this helped", feedbackDown: "No, this did not help",
      feedbackReason: "What was missing or wrong? (optional)", feedbackSend: "Send feedback",
      feedbackThanks: "Thank you for your feedback.",
      cardExecuted: "Done: the change was made.", cardRejected: "Rejected: nothing was changed.",
      cardExpired: "Expired: nothing was changed. Ask again if you still need it.",
      cardRefused: "Not carried out; nothing was changed.",
      cardFailed: "Could not be completed: the system answered with an error.", cardWorking: "One moment…",
      bookingTitle: "Pick a time", bookingZone: "Times in", bookingHoldNote: "When you pick a time we keep it for you {n} min while you confirm.",
      bookingNone: "No free times left on these dates. Ask for another day in the chat.", bookingSlot: "Book",
      bookingHeld: "Kept for you: {t} left to confirm it.", bookingName: "Name", bookingEmail: "E-mail",
      bookingPhone: "Phone (optional)", bookingConfirm: "Confirm booking", bookingCancel: "Cancel",
      bookingTaken: "That time is no longer free. These are still free that day:",
      bookingTakenNone: "That time is no longer free and no other is left that day. Ask for another day in the chat.",
      bookingExpired: "The time to confirm ran out. Pick a time again.",
      bookingReleased: "Time released. You can pick another one.", bookingGone: "That time is no longer kept for you. Pick a time again.",
      bookingDone: "Booking confirmed", bookingCode: "Code", bookingMissing: "Missing:", bookingCheck: "Please check:",
      fieldName: "name", fieldEmail: "e-mail", fieldPhone: "phone"
    }
  };
  var T = STRINGS[LANG]; // the strings of the widget's current language (view.lang); setLanguage() changes both
  var FEEDBACK_REASON_MAX = 500;

  var POLL_MS = 10000;
  var IDLE_TIMEOUT_MS = 120000; // no bytes at all (not even a keep-alive comment) for this long: treat as cut
  var HIGHLIGHT_MS = 6000;
  var STORE_CONV = "cobertura:conversation:" + SITE_KEY;
  var STORE_HANDOFF = "cobertura:handoff:" + SITE_KEY;

  // ---------------------------------------------------------------- small helpers

  function storeGet(k) { try { return window.sessionStorage.getItem(k); } catch (e) { return null; } }
  function storeSet(k, v) { try { if (v == null) window.sessionStorage.removeItem(k); else window.sessionStorage.setItem(k, v); } catch (e) { /* private mode */ } }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text != null) node.textContent = String(text);
    return node;
  }
  // ---------------------------------------------------------------- labels in the visitor's language

  var view = { lang: LANG, labels: [] }; // the panel's own labels; each Turn keeps its own (its answer's language)

  /** Show `key` of the scope's strings on `node` (`how`: "text" or an attribute name), now and again whenever the
   *  scope's language changes; `key` may be a function of the strings, for a label made of several parts. */
  function label(scope, node, how, key) {
    var entry = { node: node, how: how, key: key };
    scope.labels.push(entry);
    applyLabel(entry, STRINGS[scope.lang]);
    return node;
  }
  function applyLabel(entry, strings) {
    var value = typeof entry.key === "function" ? entry.key(strings) : strings[entry.key];
    if (entry.how === "text") entry.node.textContent = value;
    else entry.node.setAttribute(entry.how, value);
  }
  /** Switch a scope (the panel or a turn) to another language; false when it already speaks it. */
  function relabel(scope, code) {
    code = speaks(code);
    if (code === scope.lang) return false;
    scope.lang = code;
    var strings = STRINGS[code];
    scope.labels.forEach(function (entry) { applyLabel(entry, strings); });
    return true;
  }
  /** An answer's language is known: the panel (title, placeholder, send, …) and the turns to come speak it. */
  function setLanguage(code) {
    if (!relabel(view, code)) return;
    T = STRINGS[view.lang];
    if (ui.root) ui.root.setAttribute("lang", view.lang);
    if (ui.panel) bubbleLabel();
  }

  function svg(markup) { // constant, trusted icon markup only
    var wrap = document.createElement("span");
    wrap.className = "cob-icon";
    wrap.setAttribute("aria-hidden", "true");
    wrap.innerHTML = markup;
    return wrap;
  }
  var ICON_CHAT = '<svg viewBox="0 0 24 24" width="26" height="26" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="M21 12a8 8 0 0 1-11.6 7.1L4 20.5l1.4-4.9A8 8 0 1 1 21 12z"/></svg>';
  var ICON_X = '<svg viewBox="0 0 24 24" width="22" height="22" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round"><path d="M6 6l12 12M18 6L6 18"/></svg>';
  // 👍 / 👎 as drawn icons: an emoji depends on the visitor's fonts (a box on a system without an emoji font)
  var THUMB = '<path d="M3 10h4v10H3z"/><path d="M7 10l4-7c1.5 0 2.6 1.1 2.6 2.6V9h5a2 2 0 0 1 2 2.3l-1.2 6.9A2.2 2.2 0 0 1 17.2 20H7"/>';
  var ICON_UP = '<svg viewBox="0 0 24 24" width="17" height="17" fill="none" stroke="currentColor" stroke-width="1.9" stroke-linecap="round" stroke-linejoin="round">' + THUMB + '</svg>';
  var ICON_DOWN = '<svg viewBox="0 0 24 24" width="17" height="17" fill="none" stroke="currentColor" stroke-width="1.9" stroke-linecap="round" stroke-linejoin="round"><g transform="rotate(180 12 12)">' + THUMB + '</g></svg>';
  var ICON_SEND = '<svg viewBox="0 0 24 24" width="20" height="20" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round" stroke-linejoin="round"><path d="M5 12h13M12 5l7 7-7 7"/></svg>';

  /** Append text to `parent` as text nodes, newlines as <br>. Never HTML. */
  function appendText(parent, text) {
    var lines = String(text).split(/\r\n|\r|\n/);
    for (var i = 0; i < lines.length; i++) {
      if (i) parent.appendChild(document.createElement("br"));
      if (lines[i]) parent.appendChild(document.createTextNode(lines[i]));
    }
  }

  /** An http(s) URL (resolved against the API base) or "" — never javascript:, data:, … */
  function safeUrl(url) {
    if (!url || typeof url !== "string") return "";
    try {
      var u = new URL(url, API + "/");
      return u.protocol === "http:" || u.protocol === "https:" ? u.href : "";
    } catch (e) { return ""; }
  }

  // ---------------------------------------------------------------- the rendered answer, copied through an allowlist

  /** The tags api/render.py writes; nothing else is ever created from an answer's HTML. */
  var SAFE_TAGS = { P: 1, BR: 1, STRONG: 1, EM: 1, CODE: 1, PRE: 1, UL: 1, OL: 1, LI: 1, A: 1 };

  /** An absolute http(s) URL with a host, or a mailto: address; "" for anything else (relative, javascript:, …). */
  function linkUrl(href) {
    if (!href || typeof href !== "string") return "";
    var u;
    try { u = new URL(href); } catch (e) { return ""; } // no base: a relative link does not parse
    if ((u.protocol === "http:" || u.protocol === "https:") && u.hostname) return u.href;
    return u.protocol === "mailto:" && u.pathname.indexOf("@") > 0 ? u.href : "";
  }

  /** The answer's HTML parsed into an inert document (nothing in it runs or loads); null where that is not possible. */
  function parseHtml(html) {
    if (typeof DOMParser !== "function") return null;
    try { return new DOMParser().parseFromString("<!doctype html><body>" + html, "text/html").body; } catch (e) { return null; }
  }

  /** Copy `src`'s content into `dst`, building every element anew: an allowed tag without its attributes (a link
   *  keeps its checked href, an ordered list a numeric start), any other element only its text. Text goes through
   *  `onText(parent, text, plain)`; `plain` inside code and links, where no citation marker is turned into a button. */
  function copySafe(src, dst, onText, plain) {
    for (var n = src.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === 3) { onText(dst, n.nodeValue, !!plain); continue; }
      if (n.nodeType !== 1) continue; // comments and the like
      var tag = String(n.tagName).toUpperCase();
      var href = tag === "A" ? linkUrl(n.getAttribute("href")) : "";
      if (!SAFE_TAGS.hasOwnProperty(tag) || (tag === "A" && !href)) { copySafe(n, dst, onText, plain); continue; }
      var copy = document.createElement(tag.toLowerCase());
      if (href) {
        copy.href = href;
        copy.target = "_blank";
        copy.rel = "nofollow noopener noreferrer";
      }
      var start = tag === "OL" ? n.getAttribute("start") || "" : "";
      if (/^\d{1,9}$/.test(start)) copy.setAttribute("start", start);
      dst.appendChild(copy);
      copySafe(n, copy, onText, plain || tag === "CODE" || tag === "PRE" || tag === "A");
    }
  }

  /** `done.turn_id` as a whole number, or null. */
  function turnIdOf(value) {
    if (typeof value === "number") return value >= 0 && value % 1 === 0 ? value : null;
    return typeof value === "string" && /^\d{1,15}$/.test(value) ? Number(value) : null;
  }

  function toRgba(color, alpha) {
    var probe = document.createElement("span");
    probe.style.color = color;
    probe.style.display = "none";
    (document.body || document.documentElement).appendChild(probe);
    var rgb = getComputedStyle(probe).color || "";
    probe.parentNode.removeChild(probe);
    var m = rgb.match(/rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)/);
    return m ? "rgba(" + m[1] + "," + m[2] + "," + m[3] + "," + alpha + ")" : "rgba(37,99,235," + alpha + ")";
  }

  function headers(json) {
    var h = { "X-Site-Key": SITE_KEY };
    if (json) h["Content-Type"] = "application/json";
    if (CUSTOMER_TOKEN) h["X-Customer-Token"] = CUSTOMER_TOKEN;
    return h;
  }

  /** The message of an error envelope {"error": {code, message, retryable}}, or a localized default. */
  function errorFromResponse(res) {
    return res.text().then(function (body) {
      var err = null;
      try { err = JSON.parse(body).error || null; } catch (e) { /* not JSON */ }
      var fallback = res.status === 413 ? T.tooLong : res.status === 429 ? T.rateLimited
        : res.status === 401 || res.status === 403 ? T.badKey : T.error;
      // what a visitor can cause is said in their language; anything else keeps the server's own words
      var local = { message_too_long: T.tooLong, too_large: T.tooLong, rate_limited: T.rateLimited,
        invalid_site_key: T.badKey, missing_site_key: T.badKey, channel_disabled: T.badKey }[err && err.code];
      return {
        code: (err && err.code) || "http_" + res.status,
        message: local || (err && typeof err.message === "string" && err.message) || fallback,
        retryable: err && typeof err.retryable === "boolean" ? err.retryable : res.status === 429 || res.status >= 500,
        status: res.status
      };
    }, function () {
      return { code: "http_" + res.status, message: T.error, retryable: res.status >= 500, status: res.status };
    });
  }

  // ---------------------------------------------------------------- SSE parser

  /** Incremental parser of the text/event-stream wire format. feed(chunk) / end() call onEvent(name, dataString). */
  function SSEParser(onEvent) {
    var buf = "";
    var name = "";
    var data = [];
    function dispatch() {
      if (data.length) onEvent(name || "message", data.join("\n"));
      name = "";
      data = [];
    }
    function line(l) {
      if (l === "") { dispatch(); return; }
      if (l.charAt(0) === ":") return; // comment / keep-alive
      var idx = l.indexOf(":");
      var field = idx === -1 ? l : l.slice(0, idx);
      var value = idx === -1 ? "" : l.slice(idx + 1);
      if (value.charAt(0) === " ") value = value.slice(1);
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
      // id / retry / anything else: irrelevant for a one-shot POST stream
    }
    function drain(final) {
      for (;;) {
        var m = buf.search(/\r|\n/);
        if (m === -1) break;
        if (buf.charAt(m) === "\r" && m === buf.length - 1 && !final) break; // maybe the \r of a \r\n split across chunks
        var l = buf.slice(0, m);
        var skip = buf.charAt(m) === "\r" && buf.charAt(m + 1) === "\n" ? 2 : 1;
        buf = buf.slice(m + skip);
        line(l);
      }
    }
    this.feed = function (chunk) { buf += chunk; drain(false); };
    this.end = function () {
      drain(true);
      if (buf) { line(buf); buf = ""; }
      dispatch(); // lenient: a last event without its blank line still counts if its data is complete JSON
    };
  }

  // ---------------------------------------------------------------- styles

  function injectStyles() {
    if (document.getElementById("cob-style")) return;
    var soft = toRgba(ACCENT, 0.1);
    var ring = toRgba(ACCENT, 0.35);
    var css = [
      ".cob-root{--cob-accent:" + ACCENT + ";--cob-accent-soft:" + soft + ";--cob-ring:" + ring + ";",
      "  position:fixed;right:20px;bottom:20px;z-index:2147483000;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,'Noto Sans',sans-serif;color:#111827;text-align:left;letter-spacing:normal;}",
      ".cob-root *,.cob-root *::before,.cob-root *::after{box-sizing:border-box;}",
      ".cob-root button,.cob-root textarea{font:inherit;color:inherit;letter-spacing:normal;text-transform:none;margin:0;}",
      ".cob-root .cob-icon{display:inline-flex;line-height:0;}",
      ".cob-root .cob-bubble{width:58px;height:58px;border-radius:50%;border:0;padding:0;background:var(--cob-accent);color:#fff;cursor:pointer;display:flex;align-items:center;justify-content:center;box-shadow:0 6px 20px rgba(17,24,39,.25);transition:transform .15s ease,box-shadow .15s ease;position:relative;}",
      ".cob-root .cob-bubble:hover{transform:translateY(-1px) scale(1.04);box-shadow:0 10px 26px rgba(17,24,39,.3);}",
      ".cob-root .cob-bubble:focus-visible,.cob-root .cob-iconbtn:focus-visible,.cob-root .cob-send:focus-visible,.cob-root .cob-chip:focus-visible,.cob-root .cob-btn:focus-visible,.cob-root .cob-cite:focus-visible{outline:3px solid var(--cob-ring);outline-offset:2px;}",
      ".cob-root .cob-badge{position:absolute;top:2px;right:2px;width:14px;height:14px;border-radius:50%;background:#ef4444;border:2px solid #fff;}",
      ".cob-root .cob-badge[hidden]{display:none;}",
      ".cob-root .cob-panel{position:absolute;right:0;bottom:74px;width:360px;height:min(600px,calc(100vh - 120px));min-height:320px;background:#fff;border-radius:16px;box-shadow:0 12px 40px rgba(17,24,39,.22),0 2px 8px rgba(17,24,39,.08);display:flex;flex-direction:column;overflow:hidden;border:1px solid rgba(17,24,39,.08);animation:cob-in .16s ease-out;}",
      ".cob-root .cob-panel[hidden]{display:none;}",
      "@keyframes cob-in{from{opacity:0;transform:translateY(8px) scale(.98);}to{opacity:1;transform:none;}}",
      ".cob-root .cob-header{display:flex;align-items:center;gap:8px;padding:12px 10px 12px 16px;background:var(--cob-accent);color:#fff;}",
      ".cob-root .cob-title{flex:1;margin:0;font-size:16px;font-weight:600;line-height:1.3;color:#fff;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;}",
      ".cob-root .cob-iconbtn{background:transparent;border:0;color:#fff;cursor:pointer;width:34px;height:34px;border-radius:8px;display:flex;align-items:center;justify-content:center;padding:0;}",
      ".cob-root .cob-iconbtn:hover{background:rgba(255,255,255,.16);}",
      ".cob-root .cob-messages{flex:1;overflow-y:auto;padding:16px 14px;display:flex;flex-direction:column;gap:10px;background:#f8fafc;overscroll-behavior:contain;}",
      ".cob-root .cob-empty{margin:auto;color:#6b7280;font-size:14px;text-align:center;padding:20px;}",
      ".cob-root .cob-msg{display:flex;flex-direction:column;max-width:88%;gap:6px;}",
      ".cob-root .cob-user{align-self:flex-end;align-items:flex-end;}",
      ".cob-root .cob-assistant,.cob-root .cob-staff{align-self:flex-start;align-items:flex-start;}",
      ".cob-root .cob-body{padding:9px 13px;border-radius:16px;word-wrap:break-word;overflow-wrap:anywhere;white-space:normal;}",
      ".cob-root .cob-body:empty{display:none;}",
      ".cob-root .cob-user .cob-body{background:var(--cob-accent);color:#fff;border-bottom-right-radius:5px;}",
      ".cob-root .cob-assistant .cob-body{background:#fff;color:#111827;border:1px solid #e5e7eb;border-bottom-left-radius:5px;}",
      ".cob-root .cob-staff .cob-body{background:#fff7ed;color:#111827;border:1px solid #fed7aa;border-bottom-left-radius:5px;}",
      ".cob-root .cob-msg[data-status=truncated] .cob-body{border-style:dashed;}",
      // a partial answer: the material covers the topic, not the point asked. Its first paragraph says what is
      // missing (shown as a small notice inside the answer); the cited facts follow as in any answer
      ".cob-root .cob-msg[data-status=partial] .cob-body{border-color:#fcd34d;}",
      ".cob-root .cob-partial-note{display:block;margin:0 0 7px;padding:5px 9px;border-radius:8px;background:#fffbeb;color:#92400e;border:1px solid #fde68a;font-size:12.5px;font-weight:600;line-height:1.4;}",
      ".cob-root .cob-partial-note::before{content:'\\25D0';margin-right:6px;font-weight:400;}",
      ".cob-root .cob-label{font-size:11.5px;color:#9a3412;font-weight:600;padding-left:4px;}",
      // the rendered answer (api/render.py): compact blocks that fit a chat bubble
      ".cob-root .cob-body p,.cob-root .cob-body ul,.cob-root .cob-body ol,.cob-root .cob-body pre{margin:0;}",
      ".cob-root .cob-body > * + p,.cob-root .cob-body > * + ul,.cob-root .cob-body > * + ol,.cob-root .cob-body > * + pre{margin-top:8px;}",
      ".cob-root .cob-body ul,.cob-root .cob-body ol{padding-left:20px;}",
      ".cob-root .cob-body li + li{margin-top:2px;}",
      ".cob-root .cob-body strong{font-weight:650;}",
      ".cob-root .cob-body code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,'Liberation Mono',monospace;font-size:12.5px;background:#f3f4f6;border:1px solid #e5e7eb;border-radius:5px;padding:0 4px;}",
      ".cob-root .cob-body pre{background:#f3f4f6;border:1px solid #e5e7eb;border-radius:8px;padding:8px 10px;overflow-x:auto;white-space:pre;}",
      ".cob-root .cob-body pre code{background:none;border:0;padding:0;font-size:12.5px;}",
      ".cob-root .cob-body a:not(.cob-cite){color:var(--cob-accent);text-decoration:underline;}",
      ".cob-root .cob-feedback{display:flex;flex-direction:column;gap:6px;font-size:12.5px;color:#6b7280;padding:0 4px;width:100%;}",
      ".cob-root .cob-feedback-row{display:flex;align-items:center;gap:6px;flex-wrap:wrap;}",
      ".cob-root .cob-rate{border:1px solid #e5e7eb;background:#fff;color:#4b5563;border-radius:8px;width:32px;height:28px;padding:0;display:inline-flex;align-items:center;justify-content:center;cursor:pointer;}",
      ".cob-root .cob-rate:hover:not(:disabled){color:var(--cob-accent);}",
      ".cob-root .cob-rate:hover:not(:disabled){background:var(--cob-accent-soft);border-color:var(--cob-ring);}",
      ".cob-root .cob-rate[aria-pressed=true]{background:var(--cob-accent-soft);border-color:var(--cob-accent);color:var(--cob-accent);}",
      ".cob-root .cob-rate:disabled{cursor:default;opacity:.6;}",
      ".cob-root .cob-rate[aria-pressed=true]:disabled{opacity:1;}",
      ".cob-root .cob-rate:focus-visible{outline:3px solid var(--cob-ring);outline-offset:2px;}",
      ".cob-root .cob-feedback-form{display:flex;flex-direction:column;gap:6px;align-items:flex-start;}",
      ".cob-root .cob-feedback-form[hidden]{display:none;}",
      ".cob-root .cob-feedback-reason{width:100%;resize:vertical;min-height:52px;border:1px solid #d1d5db;border-radius:8px;padding:6px 9px;font-size:13px;background:#fff;color:#111827;outline:none;}",
      ".cob-root .cob-feedback-reason:focus{border-color:var(--cob-accent);box-shadow:0 0 0 3px var(--cob-accent-soft);}",
      ".cob-root .cob-feedback-result:empty{display:none;}",
      ".cob-root .cob-feedback-result.cob-error{color:#991b1b;}",
      ".cob-root .cob-label time{font-weight:400;color:#6b7280;margin-left:6px;}",
      ".cob-root .cob-cite{display:inline-flex;align-items:center;justify-content:center;min-width:18px;height:18px;padding:0 5px;margin:0 1px;border-radius:9px;border:0;background:var(--cob-accent-soft);color:var(--cob-accent);font-size:11px;font-weight:700;line-height:1;text-decoration:none;vertical-align:2px;cursor:pointer;}",
      ".cob-root .cob-cite:hover{background:var(--cob-accent);color:#fff;}",
      ".cob-root .cob-sources{width:100%;font-size:12.5px;color:#4b5563;padding:0 4px;}",
      ".cob-root .cob-sources-toggle{background:none;border:0;padding:2px 0;color:#6b7280;cursor:pointer;font-size:12.5px;font-weight:600;}",
      ".cob-root .cob-sources-toggle:hover{color:var(--cob-accent);}",
      ".cob-root .cob-sources-toggle::before{content:'▸ ';}",
      ".cob-root .cob-sources-toggle[aria-expanded=true]::before{content:'▾ ';}",
      ".cob-root .cob-sources ol{list-style:none;margin:4px 0 0;padding:0;display:flex;flex-direction:column;gap:2px;}",
      ".cob-root .cob-sources ol[hidden]{display:none;}",
      ".cob-root .cob-source{padding:3px 6px;border-radius:6px;transition:background .3s ease;}",
      ".cob-root .cob-source a{color:var(--cob-accent);text-decoration:underline;}",
      ".cob-root .cob-source-path{color:#9ca3af;}",
      ".cob-root .cob-source-active{background:var(--cob-accent-soft);box-shadow:inset 3px 0 0 var(--cob-accent);animation:cob-flash 1s ease-out;}",
      "@keyframes cob-flash{0%{background:" + toRgba(ACCENT, 0.3) + ";}100%{background:var(--cob-accent-soft);}}",
      ".cob-root .cob-chips{display:flex;flex-wrap:wrap;gap:6px;}",
      ".cob-root .cob-chip{background:#fff;border:1px solid var(--cob-ring);color:var(--cob-accent);border-radius:999px;padding:5px 11px;font-size:13px;cursor:pointer;text-align:left;line-height:1.3;}",
      ".cob-root .cob-chip:hover:not(:disabled){background:var(--cob-accent-soft);}",
      ".cob-root .cob-chip:disabled{opacity:.5;cursor:default;}",
      ".cob-root .cob-section-chip{border-style:dashed;}",
      ".cob-root .cob-notice{font-size:13px;padding:8px 11px;border-radius:10px;background:#eff6ff;color:#1e3a8a;border:1px solid #bfdbfe;display:flex;flex-wrap:wrap;align-items:center;gap:8px;}",
      ".cob-root .cob-notice.cob-error{background:#fef2f2;color:#991b1b;border-color:#fecaca;}",
      ".cob-root .cob-notice.cob-truncated{background:#fffbeb;color:#92400e;border-color:#fde68a;}",
      ".cob-root .cob-notice.cob-handoff{background:#fff7ed;color:#9a3412;border-color:#fed7aa;}",
      ".cob-root .cob-btn{border-radius:8px;border:1px solid #d1d5db;background:#fff;color:#111827;padding:5px 12px;cursor:pointer;font-size:13px;font-weight:600;}",
      ".cob-root .cob-btn:hover:not(:disabled){background:#f3f4f6;}",
      ".cob-root .cob-btn-primary{background:var(--cob-accent);border-color:var(--cob-accent);color:#fff;}",
      ".cob-root .cob-btn-primary:hover:not(:disabled){background:var(--cob-accent);filter:brightness(1.08);}",
      ".cob-root .cob-btn:disabled{opacity:.5;cursor:default;}",
      ".cob-root .cob-card,.cob-root .cob-booking{background:#fff;border:1px solid #e5e7eb;border-radius:12px;padding:12px;display:flex;flex-direction:column;gap:8px;width:100%;min-width:240px;}",
      ".cob-root .cob-card-title{font-weight:600;font-size:14px;margin:0;}",
      ".cob-root .cob-card-summary{color:#374151;margin:0;}",
      ".cob-root .cob-card table{border-collapse:collapse;width:100%;font-size:13px;}",
      ".cob-root .cob-card th,.cob-root .cob-card td{text-align:left;padding:3px 4px;border-top:1px solid #f3f4f6;vertical-align:top;overflow-wrap:anywhere;}",
      ".cob-root .cob-card th{color:#6b7280;font-weight:500;width:40%;}",
      ".cob-root .cob-card-expires{font-size:12px;color:#6b7280;}",
      ".cob-root .cob-card-actions{display:flex;gap:8px;}",
      ".cob-root .cob-card-result{font-size:13px;color:#374151;}",
      ".cob-root .cob-card-result.cob-error{color:#991b1b;}",
      ".cob-root .cob-card-result:empty,.cob-root .cob-card-reason:empty{display:none;}",
      // the rows stack (label above its value): an e-mail or an address keeps its line in a 360 px panel
      ".cob-root .cob-card tr{display:block;padding:5px 2px;border-top:1px solid #f3f4f6;}",
      ".cob-root .cob-card th,.cob-root .cob-card td{display:block;width:auto;padding:0;border:0;}",
      ".cob-root .cob-card th{font-size:12px;}",
      ".cob-root .cob-card-before{display:block;color:#6b7280;text-decoration:line-through;}",
      ".cob-root .cob-card-before.cob-card-none{text-decoration:none;}",
      ".cob-root .cob-card-arrow{color:#6b7280;}",
      ".cob-root .cob-card-after{font-weight:600;}",
      ".cob-root .cob-card-reason{font-size:12px;color:#6b7280;}",
      ".cob-root .cob-card[data-card-status=executed]{border-color:#86efac;}",
      ".cob-root .cob-card[data-card-status=executed] .cob-card-result{color:#166534;font-weight:600;}",
      ".cob-root .cob-card[data-card-status=rejected] .cob-card-result{color:#374151;font-weight:600;}",
      ".cob-root .cob-card[data-card-status=expired],.cob-root .cob-card[data-card-status=refused],.cob-root .cob-card[data-card-status=failed]{border-color:#fecaca;}",
      ".cob-root .cob-card[data-card-status=expired] .cob-card-result,.cob-root .cob-card[data-card-status=refused] .cob-card-result,.cob-root .cob-card[data-card-status=failed] .cob-card-result{color:#991b1b;font-weight:600;}",
      // the booking window (booking_window): the times of each day as buttons, then the held time's form
      ".cob-root .cob-booking-zone,.cob-root .cob-booking-hint{font-size:12.5px;color:#4b5563;margin:0;}",
      ".cob-root .cob-booking-zone{font-weight:600;}",
      ".cob-root .cob-booking-days{display:flex;flex-direction:column;gap:8px;}",
      ".cob-root .cob-booking-days[hidden],.cob-root .cob-booking-form[hidden],.cob-root .cob-booking-hint[hidden]{display:none;}",
      ".cob-root .cob-booking-day-label{font-size:12.5px;font-weight:600;color:#374151;margin:0 0 4px;}",
      ".cob-root .cob-booking-day-label::first-letter{text-transform:uppercase;}",
      ".cob-root .cob-slot{font-variant-numeric:tabular-nums;}",
      ".cob-root .cob-slot[aria-pressed=true]{background:var(--cob-accent);color:#fff;border-color:var(--cob-accent);}",
      ".cob-root .cob-booking-note{font-size:13px;color:#374151;}",
      ".cob-root .cob-booking-note:empty{display:none;}",
      ".cob-root .cob-booking-note.cob-error{color:#991b1b;}",
      ".cob-root .cob-booking-form{display:flex;flex-direction:column;gap:6px;border-top:1px solid #f3f4f6;padding-top:8px;}",
      ".cob-root .cob-booking-chosen{font-weight:600;margin:0;}",
      ".cob-root .cob-booking-countdown{font-size:12.5px;color:#92400e;margin:0;font-variant-numeric:tabular-nums;}",
      ".cob-root .cob-booking-form label{display:flex;flex-direction:column;gap:2px;font-size:12px;color:#4b5563;}",
      ".cob-root .cob-booking-form input{font:inherit;font-size:14px;color:#111827;border:1px solid #d1d5db;border-radius:8px;padding:6px 9px;background:#fff;outline:none;}",
      ".cob-root .cob-booking-form input:focus{border-color:var(--cob-accent);box-shadow:0 0 0 3px var(--cob-accent-soft);}",
      ".cob-root .cob-booking-form input[aria-invalid=true]{border-color:#dc2626;box-shadow:0 0 0 3px rgba(220,38,38,.12);}",
      ".cob-root .cob-booking-done{color:#166534;font-weight:600;}",
      ".cob-root .cob-booking-done strong{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;letter-spacing:.04em;}",
      ".cob-root .cob-booking[data-booking-state=booked]{border-color:#86efac;}",
      ".cob-root .cob-typing{display:flex;align-items:center;gap:8px;color:#6b7280;font-size:13px;padding:8px 12px;background:#fff;border:1px solid #e5e7eb;border-radius:16px;border-bottom-left-radius:5px;}",
      ".cob-root .cob-dots{display:inline-flex;gap:3px;}",
      ".cob-root .cob-dots i{width:6px;height:6px;border-radius:50%;background:#9ca3af;display:block;animation:cob-dot 1.2s infinite ease-in-out;}",
      ".cob-root .cob-dots i:nth-child(2){animation-delay:.15s;}.cob-root .cob-dots i:nth-child(3){animation-delay:.3s;}",
      "@keyframes cob-dot{0%,80%,100%{opacity:.3;transform:translateY(0);}40%{opacity:1;transform:translateY(-3px);}}",
      ".cob-root .cob-composer{display:flex;align-items:flex-end;gap:8px;padding:10px 12px;border-top:1px solid #e5e7eb;background:#fff;}",
      ".cob-root .cob-input{flex:1;resize:none;border:1px solid #d1d5db;border-radius:12px;padding:9px 12px;font-size:14px;line-height:1.4;max-height:120px;min-height:40px;background:#fff;color:#111827;outline:none;}",
      ".cob-root .cob-input:focus{border-color:var(--cob-accent);box-shadow:0 0 0 3px var(--cob-accent-soft);}",
      ".cob-root .cob-send{width:40px;height:40px;flex:none;border-radius:12px;border:0;background:var(--cob-accent);color:#fff;cursor:pointer;display:flex;align-items:center;justify-content:center;padding:0;}",
      ".cob-root .cob-send:disabled{opacity:.45;cursor:default;}",
      ".cob-root .cob-sr{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0;}",
      "@media (max-width:480px){",
      "  .cob-root{right:14px;bottom:14px;}",
      "  .cob-root .cob-panel{position:fixed;inset:0;width:auto;height:auto;min-height:0;border-radius:0;border:0;}",
      "  .cob-root.cob-open .cob-bubble{display:none;}",
      "}",
      "@media (prefers-reduced-motion:reduce){.cob-root *{animation:none!important;transition:none!important;}}",
      // the host-page highlight for `section` events (the class name is part of the contract)
      ".cobertura-highlight{outline:3px solid " + ACCENT + "!important;outline-offset:4px;background-color:" + soft + "!important;border-radius:6px;animation:cobertura-pulse 1.2s ease-out 2;}",
      "@keyframes cobertura-pulse{0%{box-shadow:0 0 0 0 " + toRgba(ACCENT, 0.45) + ";}100%{box-shadow:0 0 0 16px " + toRgba(ACCENT, 0) + ";}}",
      "@media (prefers-reduced-motion:reduce){.cobertura-highlight{animation:none;}}"
    ].join("\n");
    var style = document.createElement("style");
    style.id = "cob-style";
    style.textContent = css;
    (document.head || document.documentElement).appendChild(style);
  }

  // ---------------------------------------------------------------- state

  var ui = {};
  var busy = false;
  var current = Promise.resolve(); // the running turn, so ask() calls queue instead of overlapping
  var conversationId = storeGet(STORE_CONV) || null;
  var handoff = (function () {
    try { return JSON.parse(storeGet(STORE_HANDOFF) || "null"); } catch (e) { return null; }
  })(); // {conversation_id, after, seen: [ids]} while a person of the team may reply
  var pollTimer = null;
  var polling = false;
  var highlightTimers = typeof WeakMap === "function" ? new WeakMap() : null;

  // ---------------------------------------------------------------- DOM

  function build() {
    if (ui.panel) return;
    injectStyles();
    var root = el("div", "cob-root");
    root.id = "cob-root";
    root.setAttribute("lang", view.lang);

    var panel = el("div", "cob-panel");
    panel.id = "cob-panel";
    panel.hidden = true;
    panel.setAttribute("role", "dialog");
    panel.setAttribute("aria-modal", "false");
    panel.setAttribute("aria-labelledby", "cob-title");

    var header = el("div", "cob-header");
    var title = label(view, el("h2", "cob-title"), "text", function (s) { return TITLE || s.title; });
    title.id = "cob-title";
    var closeBtn = el("button", "cob-iconbtn cob-close");
    closeBtn.type = "button";
    closeBtn.id = "cob-close";
    label(view, closeBtn, "aria-label", "close");
    label(view, closeBtn, "title", "close");
    closeBtn.appendChild(svg(ICON_X));
    header.appendChild(title);
    header.appendChild(closeBtn);

    var list = el("div", "cob-messages");
    list.id = "cob-messages";
    list.setAttribute("aria-live", "polite");
    list.setAttribute("aria-relevant", "additions text");
    label(view, list, "aria-label", "messages");
    list.setAttribute("tabindex", "0");
    var empty = label(view, el("p", "cob-empty"), "text", "empty");
    list.appendChild(empty);

    var composer = el("form", "cob-composer");
    composer.setAttribute("novalidate", "");
    var inputLabel = label(view, el("label", "cob-sr"), "text", "inputLabel");
    inputLabel.setAttribute("for", "cob-input");
    var input = el("textarea", "cob-input");
    input.id = "cob-input";
    input.setAttribute("maxlength", "2000"); // the endpoint's limit per message
    input.rows = 1;
    label(view, input, "placeholder", "placeholder");
    input.setAttribute("autocomplete", "off");
    var send = el("button", "cob-send");
    send.type = "submit";
    send.id = "cob-send";
    label(view, send, "aria-label", "send");
    label(view, send, "title", "send");
    send.appendChild(svg(ICON_SEND));
    send.appendChild(label(view, el("span", "cob-sr"), "text", "send"));
    composer.appendChild(inputLabel);
    composer.appendChild(input);
    composer.appendChild(send);

    panel.appendChild(header);
    panel.appendChild(list);
    panel.appendChild(composer);

    var bubble = el("button", "cob-bubble");
    bubble.type = "button";
    bubble.id = "cob-bubble";
    bubble.setAttribute("aria-label", T.open);
    bubble.setAttribute("aria-controls", "cob-panel");
    bubble.setAttribute("aria-expanded", "false");
    bubble.title = T.open; // open() and close() switch it (bubbleLabel)
    var iconChat = svg(ICON_CHAT);
    var iconX = svg(ICON_X);
    iconX.style.display = "none";
    var badge = el("span", "cob-badge");
    badge.hidden = true;
    label(view, badge, "aria-label", "newMessage");
    bubble.appendChild(iconChat);
    bubble.appendChild(iconX);
    bubble.appendChild(badge);

    root.appendChild(panel);
    root.appendChild(bubble);
    document.body.appendChild(root);

    ui = { root: root, panel: panel, list: list, empty: empty, input: input, send: send, bubble: bubble,
      iconChat: iconChat, iconX: iconX, badge: badge, close: closeBtn };

    bubble.addEventListener("click", function () { if (panel.hidden) open(); else close(); });
    closeBtn.addEventListener("click", function () { close(); });
    panel.addEventListener("keydown", function (e) {
      if (e.key === "Escape") { e.stopPropagation(); close(); }
    });
    composer.addEventListener("submit", function (e) {
      e.preventDefault();
      submitInput();
    });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
        e.preventDefault();
        submitInput();
      }
    });
    input.addEventListener("input", function () { autosize(); updateSend(); });
    updateSend();
  }

  function autosize() {
    var i = ui.input;
    i.style.height = "auto";
    i.style.height = Math.min(i.scrollHeight + 2, 120) + "px";
  }
  function updateSend() { ui.send.disabled = busy || !ui.input.value.trim(); }

  function submitInput() {
    var text = ui.input.value.trim();
    if (!text || busy) return;
    ui.input.value = "";
    autosize();
    ask(text);
  }

  function open() {
    if (!ui.panel) return;
    ui.panel.hidden = false;
    ui.root.classList.add("cob-open");
    ui.bubble.setAttribute("aria-expanded", "true");
    bubbleLabel();
    ui.iconChat.style.display = "none";
    ui.iconX.style.display = "";
    ui.badge.hidden = true;
    scrollToBottom();
    try { ui.input.focus({ preventScroll: true }); } catch (e) { ui.input.focus(); }
  }
  function close() {
    if (!ui.panel) return;
    var hadFocus = ui.panel.contains(document.activeElement);
    ui.panel.hidden = true;
    ui.root.classList.remove("cob-open");
    ui.bubble.setAttribute("aria-expanded", "false");
    bubbleLabel();
    ui.iconChat.style.display = "";
    ui.iconX.style.display = "none";
    if (hadFocus) ui.bubble.focus();
  }

  /** The bubble says what a click does: open the panel, or close it. */
  function bubbleLabel() {
    var text = ui.panel.hidden ? T.open : T.close;
    ui.bubble.setAttribute("aria-label", text);
    ui.bubble.title = text;
  }

  function nearBottom() {
    var l = ui.list;
    return l.scrollHeight - l.scrollTop - l.clientHeight < 80;
  }
  function scrollToBottom() { ui.list.scrollTop = ui.list.scrollHeight; }
  /** Run a DOM mutation, keeping the list pinned to the bottom if the reader was at the bottom. */
  function mutate(fn) {
    var stick = nearBottom();
    var out = fn();
    if (stick) ui.list.scrollTop = ui.list.scrollHeight;
    return out;
  }

  function addToList(node) {
    if (ui.empty && ui.empty.parentNode) ui.empty.parentNode.removeChild(ui.empty);
    mutate(function () { ui.list.appendChild(node); });
  }

  function userMessage(text) {
    var m = el("div", "cob-msg cob-user");
    m.setAttribute("aria-label", T.you);
    var body = el("div", "cob-body");
    appendText(body, text);
    m.appendChild(body);
    addToList(m);
    ui.list.scrollTop = ui.list.scrollHeight;
    return m;
  }

  function notice(parent, kind, text) {
    var n = el("div", "cob-notice" + (kind ? " cob-" + kind : ""));
    if (kind === "error") n.setAttribute("role", "alert");
    n.appendChild(el("span", "cob-notice-text", text));
    mutate(function () { parent.appendChild(n); });
    return n;
  }

  // ---------------------------------------------------------------- one assistant turn

  /** The assistant message of one turn. Child slots keep a stable order whatever order events arrive in. */
  function Turn(question) {
    var self = this;
    this.question = question;
    this.text = "";
    this.citations = [];
    this.done = false;
    this.handoff = false;
    this.status = null;
    this.missing = null; // a partial answer: what the material does not mention (from `done`)
    this.html = ""; // the whole answer as HTML (the `rendered` event), shown in place of the streamed text
    this.lang = view.lang; // the panel's language until `done` says the answer's
    this.labels = [];
    this.searching = false;
    this.node = el("div", "cob-msg cob-assistant");
    this.node.setAttribute("lang", this.lang);
    label(this, this.node, "aria-label", "assistant");
    this.node.setAttribute("aria-busy", "true");
    this.body = el("div", "cob-body");
    this.typing = el("div", "cob-typing");
    var dots = el("span", "cob-dots");
    dots.appendChild(el("i"));
    dots.appendChild(el("i"));
    dots.appendChild(el("i"));
    this.typingLabel = label(this, el("span", "cob-typing-label"), "text", function (s) {
      return self.searching ? s.searching : s.thinking;
    });
    this.typing.appendChild(dots);
    this.typing.appendChild(this.typingLabel);
    this.sources = null;
    this.slotSections = el("div", "cob-chips cob-sections");
    this.slotWidgets = el("div", "cob-widgets");
    this.slotNotices = el("div", "cob-notices");
    this.slotFeedback = el("div", "cob-feedback-slot");
    this.slotFollowups = el("div", "cob-chips cob-followups");
    [this.body, this.typing, this.slotSections, this.slotWidgets, this.slotNotices, this.slotFeedback,
      this.slotFollowups].forEach(function (n) {
      self.node.appendChild(n);
    });
    this.tidy();
    addToList(this.node);
  }

  /** The strings of this turn's language. */
  Turn.prototype.t = function () { return STRINGS[this.lang]; };

  /** The answer's language is known: this turn's labels and, from now on, the panel's speak it. */
  Turn.prototype.speak = function (code) {
    if (relabel(this, code)) {
      this.node.setAttribute("lang", this.lang);
      if (this.text) this.render(); // the markers' labels
    }
    setLanguage(code);
  };

  Turn.prototype.tidy = function () {
    [this.slotSections, this.slotWidgets, this.slotNotices, this.slotFeedback, this.slotFollowups].forEach(function (s) {
      s.style.display = s.childNodes.length ? "" : "none";
    });
    this.slotWidgets.style.width = this.slotWidgets.childNodes.length ? "100%" : "";
  };

  Turn.prototype.stopTyping = function () {
    if (this.typing && this.typing.parentNode) this.typing.parentNode.removeChild(this.typing);
  };

  Turn.prototype.citation = function (n) {
    for (var i = 0; i < this.citations.length; i++) if (String(this.citations[i].n) === String(n)) return this.citations[i];
    return null;
  };

  /** Re-render the whole body: from the rendered HTML once it came, before that from the accumulated text
   *  (markers may be split across deltas). */
  Turn.prototype.render = function () {
    var self = this;
    var body = this.body;
    mutate(function () {
      while (body.firstChild) body.removeChild(body.firstChild);
      var parsed = self.html ? parseHtml(self.html) : null;
      if (parsed) self.renderHtml(body, parsed);
      else self.renderText(body, self.text);
      body.setAttribute("data-rendered", parsed ? "html" : "text");
      if (self.text && self.citations.length && !self.sources) self.buildSources();
    });
  };

  function partialNote() {
    var note = el("span", "cob-partial-note");
    note.setAttribute("role", "note");
    return note;
  }

  Turn.prototype.renderText = function (body, text) {
    var cut = this.missing ? text.search(/\n[ \t]*\n/) : -1;
    if (cut > 0) { // a partial answer's first paragraph says what the material does not mention
      var note = partialNote();
      appendText(note, text.slice(0, cut));
      body.appendChild(note);
      text = text.slice(cut).replace(/^\s+/, "");
    }
    this.cited(body, text, true);
  };

  Turn.prototype.renderHtml = function (body, parsed) {
    var self = this;
    var blocks = [];
    for (var n = parsed.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) blocks.push(n);
    var first = blocks[0];
    if (this.missing && blocks.length > 1 && first.tagName === "P") { // the partial answer's preface, as a notice
      var note = partialNote();
      copySafe(first, note, function (parent, text) { parent.appendChild(document.createTextNode(text)); });
      body.appendChild(note);
      parsed.removeChild(first);
    }
    copySafe(parsed, body, function (parent, text, plain) {
      if (plain) parent.appendChild(document.createTextNode(text));
      else self.cited(parent, text, false);
    });
  };

  /** Append `text`, its known citation markers ([1], [1, 2]) as source buttons; newlines as <br> when `breaks`. */
  Turn.prototype.cited = function (parent, text, breaks) {
    var self = this;
    function put(piece) {
      if (breaks) appendText(parent, piece);
      else if (piece) parent.appendChild(document.createTextNode(piece));
    }
    var re = /\[(\d+(?:\s*,\s*\d+)*)\]/g;
    var last = 0;
    var m;
    while ((m = re.exec(text))) {
      var nums = m[1].split(/\s*,\s*/);
      var known = nums.every(function (n) { return self.citation(n); });
      if (!known) continue; // not one of our sources: leave the text as written
      put(text.slice(last, m.index));
      nums.forEach(function (n) { parent.appendChild(self.citeNode(self.citation(n))); });
      last = m.index + m[0].length;
    }
    put(text.slice(last));
  };

  Turn.prototype.citeNode = function (c) {
    var self = this;
    var url = safeUrl(c.url);
    var node = el(url ? "a" : "button", "cob-cite", String(c.n));
    if (url) {
      node.href = url;
      node.target = "_blank";
      node.rel = "noopener noreferrer";
    } else {
      node.type = "button";
    }
    var tip = (c.title || "") + (c.path ? " — " + c.path : "");
    node.title = tip || String(c.n);
    node.setAttribute("aria-label", this.t().sources + " " + c.n + (tip ? ": " + tip : ""));
    node.setAttribute("data-n", String(c.n));
    node.addEventListener("click", function (e) {
      if (!url) e.preventDefault();
      self.showSource(c.n, !url); // a link also opens in a new tab; without one the footer entry toggles
    });
    return node;
  };

  Turn.prototype.buildSources = function () {
    var self = this;
    var box = el("div", "cob-sources");
    var count = this.citations.length;
    var toggle = label(this, el("button", "cob-sources-toggle"), "text", function (s) { return s.sources + " (" + count + ")"; });
    toggle.type = "button";
    toggle.setAttribute("aria-expanded", "false");
    var ol = el("ol");
    ol.hidden = true;
    var listId = "cob-src-" + Math.random().toString(36).slice(2, 9);
    ol.id = listId;
    toggle.setAttribute("aria-controls", listId);
    this.citations.forEach(function (c) {
      var li = el("li", "cob-source");
      li.setAttribute("data-n", String(c.n));
      li.appendChild(document.createTextNode(c.n + ". "));
      var url = safeUrl(c.url);
      var name = c.title || c.path || String(c.n);
      if (url) {
        var a = el("a", null, name);
        a.href = url;
        a.target = "_blank";
        a.rel = "noopener noreferrer";
        li.appendChild(a);
      } else {
        li.appendChild(el("span", "cob-source-title", name));
      }
      if (c.path && c.title) li.appendChild(el("span", "cob-source-path", " (" + c.path + ")"));
      ol.appendChild(li);
    });
    toggle.addEventListener("click", function () { self.expandSources(ol.hidden); });
    box.appendChild(toggle);
    box.appendChild(ol);
    this.sources = { box: box, toggle: toggle, list: ol };
    this.node.insertBefore(box, this.body.nextSibling);
  };

  Turn.prototype.expandSources = function (expand) {
    if (!this.sources) return;
    var s = this.sources;
    mutate(function () {
      s.list.hidden = !expand;
      s.toggle.setAttribute("aria-expanded", expand ? "true" : "false");
    });
  };

  Turn.prototype.showSource = function (n, toggle) {
    if (!this.sources) this.buildSources();
    var items = this.sources.list.querySelectorAll(".cob-source");
    var target = null;
    for (var i = 0; i < items.length; i++) if (items[i].getAttribute("data-n") === String(n)) target = items[i];
    if (!target) return;
    var wasActive = target.classList.contains("cob-source-active") && !this.sources.list.hidden;
    for (var j = 0; j < items.length; j++) items[j].classList.remove("cob-source-active");
    if (wasActive && toggle) return; // second click on the same marker: un-highlight
    this.expandSources(true);
    void target.offsetWidth; // restart the flash animation
    target.classList.add("cob-source-active");
    try { target.scrollIntoView({ behavior: "smooth", block: "nearest" }); } catch (e) { target.scrollIntoView(false); }
  };

  Turn.prototype.addSection = function (id, description) {
    if (typeof id !== "string" || !id) return;
    var target = document.getElementById(id);
    if (!target || (ui.root && ui.root.contains(target))) return; // not on this page: ignore
    highlight(target);
    var chip = el("button", "cob-chip cob-section-chip", "📍 " + (description || id));
    chip.type = "button";
    label(this, chip, "title", "goTo");
    chip.setAttribute("data-section", id);
    chip.addEventListener("click", function () {
      var t = document.getElementById(id);
      if (!t) return;
      if (fullScreen()) close(); // on a phone the panel covers the page: get out of the way first
      highlight(t);
    });
    var slot = this.slotSections;
    mutate(function () { slot.appendChild(chip); });
    this.tidy();
  };

  Turn.prototype.addFollowups = function (items) {
    var slot = this.slotFollowups;
    (Array.isArray(items) ? items : []).forEach(function (q) {
      if (typeof q !== "string" || !q.trim()) return;
      var chip = el("button", "cob-chip cob-followup", q);
      chip.type = "button";
      chip.addEventListener("click", function () { if (!busy) ask(q); });
      mutate(function () { slot.appendChild(chip); });
    });
    this.tidy();
  };

  /** What a card's status says to the visitor, in the strings `s`; "" while it waits for a click. */
  function cardStateText(s, status) {
    return { executed: s.cardExecuted, rejected: s.cardRejected, expired: s.cardExpired, refused: s.cardRefused,
      failed: s.cardFailed, executing: s.cardWorking }[status] || "";
  }
  var CARD_FINAL = { executed: 1, rejected: 1, expired: 1, refused: 1, failed: 1 };
  var CARD_POLLS = 10; // a 202 (another click is carrying it out): ask again this many times, CARD_POLL_MS apart
  var CARD_POLL_MS = 2000;

  function cardValue(v) { return v !== null && typeof v === "object" ? JSON.stringify(v) : String(v == null ? "" : v); }

  /** The rows of a card: its preview ({label, value}; {label, before, value} for a state change), else its params. */
  function cardRows(card) {
    var preview = (Array.isArray(card.preview) ? card.preview : []).filter(function (r) {
      return r && typeof r === "object" && r.label != null;
    });
    if (preview.length) return preview;
    var params = card.params && typeof card.params === "object" ? card.params : {};
    return Object.keys(params).map(function (k) { return { label: k, value: params[k] }; });
  }

  function cardTable(rows) {
    var table = el("table");
    var tbody = el("tbody");
    rows.forEach(function (r) {
      var tr = el("tr");
      var td = el("td");
      tr.appendChild(el("th", null, cardValue(r.label)));
      if (Object.prototype.hasOwnProperty.call(r, "before")) { // a state change: before -> after
        tr.setAttribute("data-change", "");
        var none = r.before == null || r.before === ""; // nothing before (a first value): a dash, not struck out
        td.appendChild(el("span", "cob-card-before" + (none ? " cob-card-none" : ""), none ? "—" : cardValue(r.before)));
        td.appendChild(el("span", "cob-card-arrow", " → "));
        td.appendChild(el("span", "cob-card-after", cardValue(r.value)));
      } else {
        td.appendChild(document.createTextNode(cardValue(r.value)));
      }
      tr.appendChild(td);
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    return table;
  }

  /** A proposed change (the `card` event): its rows, its expiry and Approve / Reject, which POST to
   *  /v1/cards/{id}/approve|reject with the widget's keys. While a click is under way both buttons are off; once the
   *  card is decided its final state is said in words and the buttons are gone (the server answers a repeated click
   *  with the stored decision anyway). */
  Turn.prototype.addCard = function (card) {
    var self = this;
    var box = el("div", "cob-card");
    box.setAttribute("role", "group");
    if (card.id != null) box.setAttribute("data-card-id", String(card.id));
    if (card.operation) box.setAttribute("data-operation", String(card.operation));
    if (card.title) box.appendChild(el("p", "cob-card-title", card.title));
    var rows = cardRows(card);
    if (rows.length) box.appendChild(cardTable(rows));
    var expires = null;
    if (card.expires_at) {
      var d = new Date(card.expires_at);
      expires = label(this, el("div", "cob-card-expires"), "text", function (s) {
        return s.expires + ": " + (isNaN(d) ? String(card.expires_at) : d.toLocaleString(self.lang));
      });
      box.appendChild(expires);
    }
    var actions = el("div", "cob-card-actions");
    var approve = label(this, el("button", "cob-btn cob-btn-primary cob-approve"), "text", "approve");
    var reject = label(this, el("button", "cob-btn cob-reject"), "text", "reject");
    approve.type = reject.type = "button";
    approve.setAttribute("data-card-action", "approve");
    reject.setAttribute("data-card-action", "reject");
    actions.appendChild(approve);
    actions.appendChild(reject);
    box.appendChild(actions);
    var state = { status: "", error: "" };
    var result = label(this, el("div", "cob-card-result"), "text", function (s) {
      return state.error || cardStateText(s, state.status);
    });
    var resultLabel = this.labels[this.labels.length - 1];
    result.setAttribute("role", "status");
    var reason = el("div", "cob-card-reason");
    box.appendChild(result);
    box.appendChild(reason);

    function show(status, why, error) {
      state.status = status || "";
      state.error = error || "";
      mutate(function () {
        box.setAttribute("data-card-status", state.status || "error");
        applyLabel(resultLabel, self.t());
        result.className = "cob-card-result" + (state.error ? " cob-error" : "");
        reason.textContent = (status === "refused" || status === "failed") && typeof why === "string" ? why : "";
        if (CARD_FINAL[status]) { // decided: the words stay, the buttons and the expiry go
          if (actions.parentNode) actions.parentNode.removeChild(actions);
          if (expires && expires.parentNode) expires.parentNode.removeChild(expires);
        }
      });
    }
    function unlock() { approve.disabled = reject.disabled = false; }
    function send(verb, polls) {
      fetch(API + "/v1/cards/" + encodeURIComponent(card.id) + "/" + verb, {
        method: "POST", headers: headers(false), credentials: "omit"
      }).then(function (res) {
        var copy = res.clone();
        return res.json().then(function (j) { return j; }, function () { return null; }).then(function (j) {
          var c = j && j.card && typeof j.card === "object" && typeof j.card.status === "string" ? j.card : null;
          if (c && res.status === 202 && polls > 0) { // another click is carrying it out: its result comes soon
            show("executing");
            setTimeout(function () { send(verb, polls - 1); }, CARD_POLL_MS);
            return;
          }
          if (c) { show(c.status, c.reason); if (!CARD_FINAL[c.status]) unlock(); return; }
          return errorFromResponse(copy).then(function (err) {
            show("", "", err.message);
            if (err.retryable) unlock();
            else if (actions.parentNode) mutate(function () { actions.parentNode.removeChild(actions); });
          });
        });
      }, function () {
        show("", "", self.t().network);
        unlock();
      });
    }
    function decide(verb) {
      if (approve.disabled || card.id == null) return; // a click is under way (or nothing to decide)
      approve.disabled = reject.disabled = true;
      box.setAttribute("data-decision", verb);
      show("executing");
      send(verb, CARD_POLLS);
    }
    approve.addEventListener("click", function () { decide("approve"); });
    reject.addEventListener("click", function () { decide("reject"); });
    if (card.status && card.status !== "proposed") show(String(card.status), "");
    mutate(function () { self.slotWidgets.appendChild(box); });
    this.tidy();
  };

  // ---------------------------------------------------------------- the booking window (booking_window)

  /** "4:05" for 245 seconds. */
  function mmss(seconds) {
    var s = Math.max(0, Math.floor(seconds));
    var rest = s % 60;
    return Math.floor(s / 60) + ":" + (rest < 10 ? "0" : "") + rest;
  }

  /** The day part of a slot's label ("miércoles 2 de diciembre, 10:00" -> "miércoles 2 de diciembre"). */
  function slotDay(slot) {
    var label = String(slot.label || "");
    var cut = label.lastIndexOf(", ");
    return cut > 0 ? label.slice(0, cut) : String(slot.date || "");
  }

  /** The window's slots grouped by day, as the server sent them ({date, label, slots}). */
  function bookingDays(win) {
    var days = (Array.isArray(win.days) ? win.days : []).filter(function (d) {
      return d && Array.isArray(d.slots) && d.slots.length;
    });
    return days.length ? days : groupSlots(Array.isArray(win.slots) ? win.slots : []);
  }

  function groupSlots(slots) {
    var days = [];
    slots.forEach(function (s) {
      if (!s || typeof s !== "object") return;
      var last = days[days.length - 1];
      if (!last || last.date !== String(s.date || "")) days.push(last = { date: String(s.date || ""), label: slotDay(s), slots: [] });
      last.slots.push(s);
    });
    return days;
  }

  /** The visitor's booking window: the free times as buttons by day (in the business's zone, which it names);
   *  a click holds that time (POST /v1/booking/holds) and opens the form (name, e-mail, phone) with a countdown of
   *  the hold; Confirm books it (POST .../confirm), Cancel releases it (DELETE). A time taken meanwhile (409)
   *  replaces the buttons with the free times of that day. Every server string is set as text, never markup. */
  Turn.prototype.addBooking = function (win) {
    var self = this;
    var box = el("div", "cob-booking");
    box.setAttribute("role", "group");
    box.setAttribute("data-booking-state", "choose");
    if (win.timezone) box.setAttribute("data-timezone", String(win.timezone));
    label(this, box, "aria-label", "bookingTitle");
    var title = label(this, el("p", "cob-card-title"), "text", "bookingTitle");
    box.appendChild(title);
    var zone = String(win.zone_label || win.timezone || "");
    var zoneNode = label(this, el("p", "cob-booking-zone"), "text", function (s) { return s.bookingZone + " " + zone; });
    if (zone) box.appendChild(zoneNode);
    var minutes = typeof win.hold_minutes === "number" && win.hold_minutes > 0 ? win.hold_minutes : 0;
    var hint = null;
    if (minutes) {
      hint = label(this, el("p", "cob-booking-hint"), "text", function (s) { return s.bookingHoldNote.replace("{n}", String(minutes)); });
      box.appendChild(hint);
    }
    var note = el("div", "cob-booking-note"); // above the times: "that time is taken; these are free:"
    note.setAttribute("role", "status");
    box.appendChild(note);
    var daysBox = el("div", "cob-booking-days");
    box.appendChild(daysBox);
    var form = this.bookingForm();
    box.appendChild(form.node);
    var state = { hold: null, timer: null, deadline: 0, busy: false };

    function say(text, error) {
      mutate(function () {
        note.textContent = text || "";
        note.className = "cob-booking-note" + (error ? " cob-error" : "");
      });
    }
    function setState(name) { box.setAttribute("data-booking-state", name); }
    function showSlots(days) {
      mutate(function () {
        while (daysBox.firstChild) daysBox.removeChild(daysBox.firstChild);
        days.forEach(function (d) { daysBox.appendChild(dayNode(d)); });
        if (!days.length) daysBox.appendChild(label(self, el("p", "cob-booking-hint"), "text", "bookingNone"));
        daysBox.hidden = false;
        form.node.hidden = true;
        if (hint) hint.hidden = false;
      });
      setState("choose");
    }
    function dayNode(d) {
      var day = el("div", "cob-booking-day");
      day.setAttribute("data-date", String(d.date || ""));
      day.appendChild(el("p", "cob-booking-day-label", d.label || d.date || ""));
      var chips = el("div", "cob-chips");
      d.slots.forEach(function (s) {
        if (!s || typeof s !== "object" || !(s.start || s.start_utc)) return;
        var b = el("button", "cob-chip cob-slot", s.time || s.start);
        b.type = "button";
        b.setAttribute("data-start", String(s.start || s.start_utc));
        b.setAttribute("aria-label", String(s.label || s.start));
        b.addEventListener("click", function () { hold(s, b); });
        chips.appendChild(b);
      });
      day.appendChild(chips);
      return day;
    }
    function lockSlots(on) {
      Array.prototype.forEach.call(daysBox.querySelectorAll("button"), function (b) { b.disabled = on; });
    }
    function call(method, path, body) {
      var url = API + "/v1/booking/" + path + (path.indexOf("?") === -1 ? "?" : "&") + "lang=" + encodeURIComponent(self.lang);
      var init = { method: method, headers: headers(body !== undefined), credentials: "omit" };
      if (body !== undefined) init.body = JSON.stringify(body);
      return fetch(url, init).then(function (res) {
        var copy = res.clone();
        return res.json().then(function (j) { return j; }, function () { return null; }).then(function (j) {
          if (res.ok) return { ok: true, status: res.status, body: j || {} };
          return errorFromResponse(copy).then(function (err) { return { ok: false, status: res.status, body: j || {}, error: err }; });
        });
      }, function () { return { ok: false, status: 0, body: {}, error: { message: self.t().network, code: "network" } }; });
    }
    function taken(r) {
      var alternatives = Array.isArray(r.body.alternatives) ? r.body.alternatives : [];
      showSlots(groupSlots(alternatives));
      say(self.t()[alternatives.length ? "bookingTaken" : "bookingTakenNone"], true);
      box.setAttribute("data-taken", "true");
    }
    function hold(slot, button) {
      if (state.busy || state.hold) return;
      state.busy = true;
      lockSlots(true);
      button.setAttribute("aria-pressed", "true");
      setState("holding");
      say(self.t().cardWorking);
      call("POST", "holds", { start: String(slot.start || slot.start_utc), conversation_id: conversationId || null }).then(function (r) {
        state.busy = false;
        button.setAttribute("aria-pressed", "false");
        lockSlots(false);
        if (r.ok && r.body.hold && r.body.hold.id != null) { held(r.body.hold, slot); return; }
        if (r.status === 409) { taken(r); return; }
        setState("choose");
        say(r.error ? r.error.message : self.t().error, true);
      });
    }
    function held(h, slot) {
      state.hold = h;
      box.setAttribute("data-hold-id", String(h.id));
      var left = typeof h.expires_in === "number" ? h.expires_in : 0;
      state.deadline = Date.now() + left * 1000;
      form.show(String(h.label || slot.label || ""));
      mutate(function () { daysBox.hidden = true; if (hint) hint.hidden = true; });
      setState("held");
      say("");
      tick();
      state.timer = setInterval(tick, 1000);
    }
    function tick() {
      var left = (state.deadline - Date.now()) / 1000;
      if (!box.isConnected || !state.hold) { stopTimer(); return; }
      if (left <= 0) { expired(); return; }
      form.countdown(mmss(left));
    }
    function stopTimer() { clearInterval(state.timer); state.timer = null; }
    function dropHold(messageKey, error) {
      stopTimer();
      state.hold = null;
      box.removeAttribute("data-hold-id");
      showSlots(bookingDays(win));
      say(self.t()[messageKey], error);
    }
    function expired() { dropHold("bookingExpired", true); }
    form.onCancel = function () {
      if (!state.hold || state.busy) return;
      state.busy = true;
      form.lock(true);
      call("DELETE", "holds/" + encodeURIComponent(state.hold.id)).then(function (r) {
        state.busy = false;
        form.lock(false);
        if (r.ok || r.status === 404) dropHold("bookingReleased");
        else say(r.error.message, true);
      });
    };
    form.onConfirm = function (details) {
      if (!state.hold || state.busy) return;
      state.busy = true;
      form.lock(true);
      setState("confirming");
      say(self.t().cardWorking);
      call("POST", "holds/" + encodeURIComponent(state.hold.id) + "/confirm", details).then(function (r) {
        state.busy = false;
        form.lock(false);
        if (r.ok && r.body.booking) { booked(r.body.booking); return; }
        if (r.status === 409) { // the time was taken by the calendar or a block meanwhile: let the hold go too
          call("DELETE", "holds/" + encodeURIComponent(state.hold.id));
          stopTimer();
          state.hold = null;
          box.removeAttribute("data-hold-id");
          taken(r);
          return;
        }
        if (r.status === 404 && r.error && r.error.code === "hold_not_found") { dropHold("bookingGone", true); return; }
        setState("held");
        if (r.status === 422 && (r.body.missing || r.body.problems)) { say(form.refused(r.body, self.t()), true); return; }
        say(r.error ? r.error.message : self.t().error, true);
      });
    };
    function booked(b) {
      stopTimer();
      state.hold = null;
      setState("booked");
      label(self, box, "aria-label", "bookingDone");
      if (b.code) box.setAttribute("data-booking-code", String(b.code));
      var when = [b.label, b.zone_label].filter(function (x) { return x; }).map(String).join(", ");
      var done = el("div", "cob-booking-done");
      done.setAttribute("role", "status");
      done.appendChild(label(self, el("span"), "text", function (s) { return s.bookingDone + ": " + when + ". " + s.bookingCode + ": "; }));
      done.appendChild(el("strong", "cob-booking-code", b.code || ""));
      mutate(function () {
        [title, zoneNode, hint, daysBox, form.node, note].forEach(function (n) { if (n && n.parentNode) n.parentNode.removeChild(n); });
        box.appendChild(done);
      });
    }

    showSlots(bookingDays(win));
    mutate(function () { self.slotWidgets.appendChild(box); });
    this.tidy();
  };

  /** The held time's form: name, e-mail, phone, Confirm and Cancel; ``refused`` marks the fields a 422 names. */
  Turn.prototype.bookingForm = function () {
    var self = this;
    var node = el("div", "cob-booking-form");
    node.hidden = true;
    var chosen = el("p", "cob-booking-chosen");
    var count = { left: "" };
    var countdown = label(this, el("p", "cob-booking-countdown"), "text", function (s) { return s.bookingHeld.replace("{t}", count.left); });
    var countLabel = this.labels[this.labels.length - 1];
    node.appendChild(chosen);
    node.appendChild(countdown);
    var inputs = {};
    [["name", "text", "name", "bookingName"], ["email", "email", "email", "bookingEmail"], ["phone", "tel", "tel", "bookingPhone"]].forEach(function (f) {
      var wrap = el("label", "cob-booking-field");
      var caption = label(self, el("span"), "text", f[3]);
      var input = el("input");
      input.type = f[1];
      input.name = f[0];
      input.setAttribute("autocomplete", f[2]);
      input.setAttribute("data-booking-field", f[0]);
      input.maxLength = f[0] === "email" ? 320 : f[0] === "phone" ? 64 : 200;
      if (f[0] !== "phone") input.required = true;
      input.addEventListener("input", function () { input.removeAttribute("aria-invalid"); });
      wrap.appendChild(caption);
      wrap.appendChild(input);
      node.appendChild(wrap);
      inputs[f[0]] = input;
    });
    var actions = el("div", "cob-card-actions");
    var confirm = label(this, el("button", "cob-btn cob-btn-primary"), "text", "bookingConfirm");
    var cancel = label(this, el("button", "cob-btn"), "text", "bookingCancel");
    confirm.type = cancel.type = "button";
    confirm.setAttribute("data-booking-action", "confirm");
    cancel.setAttribute("data-booking-action", "cancel");
    actions.appendChild(confirm);
    actions.appendChild(cancel);
    node.appendChild(actions);
    var form = {
      node: node, onConfirm: null, onCancel: null,
      show: function (text) {
        mutate(function () { chosen.textContent = text; node.hidden = false; });
        try { inputs.name.focus({ preventScroll: true }); } catch (e) { /* ignore */ }
      },
      countdown: function (left) { count.left = left; applyLabel(countLabel, self.t()); },
      lock: function (on) {
        confirm.disabled = cancel.disabled = on;
        Object.keys(inputs).forEach(function (k) { inputs[k].disabled = on; });
      },
      /** Mark the fields a 422 names; the words to show (in the visitor's language, or the server's). */
      refused: function (body, s) {
        var names = { name: s.fieldName, email: s.fieldEmail, phone: s.fieldPhone };
        var missing = (Array.isArray(body.missing) ? body.missing : []).filter(function (k) { return inputs[k]; });
        var problems = Array.isArray(body.problems) ? body.problems.map(String) : [];
        var wrong = Object.keys(inputs).filter(function (k) {
          return missing.indexOf(k) === -1 && problems.some(function (p) { return p.toLowerCase().indexOf(k) === 0; });
        });
        missing.concat(wrong).forEach(function (k) { inputs[k].setAttribute("aria-invalid", "true"); });
        var parts = [];
        if (missing.length) parts.push(s.bookingMissing + " " + missing.map(function (k) { return names[k]; }).join(", ") + ".");
        if (wrong.length) parts.push(s.bookingCheck + " " + wrong.map(function (k) { return names[k]; }).join(", ") + ".");
        if (!parts.length) parts = problems.length ? problems : [s.error];
        var first = missing.concat(wrong)[0];
        if (first) { try { inputs[first].focus({ preventScroll: true }); } catch (e) { /* ignore */ } }
        return parts.join(" ");
      }
    };
    confirm.addEventListener("click", function () {
      if (!form.onConfirm) return;
      var details = {};
      Object.keys(inputs).forEach(function (k) { details[k] = inputs[k].value.trim(); });
      form.onConfirm(details);
    });
    cancel.addEventListener("click", function () { if (form.onCancel) form.onCancel(); });
    return form;
  };

  /** A notice under the answer: `text` is the server's words, or {key} of a string of the turn's language. */
  Turn.prototype.addNotice = function (kind, text, retryable) {
    var n = notice(this.slotNotices, kind, typeof text === "string" ? text : "");
    if (typeof text !== "string") label(this, n.firstChild, "text", text.key);
    if (retryable) {
      var q = this.question;
      var b = label(this, el("button", "cob-btn cob-retry"), "text", "retry");
      b.type = "button";
      b.addEventListener("click", function () {
        if (busy) return;
        b.disabled = true;
        ask(q);
      });
      n.appendChild(b);
    }
    this.tidy();
    return n;
  };

  /** `done.missing` of a partial answer: its first paragraph becomes a notice, the cited rest stays an answer. */
  Turn.prototype.markPartial = function (missing) {
    var words = (Array.isArray(missing) ? missing : []).filter(function (w) { return typeof w === "string" && w; });
    if (!words.length) return;
    this.missing = words;
    this.node.setAttribute("data-missing", words.join(", "));
    if (this.text) this.render();
  };

  /** 👍 / 👎 under a recorded answer; 👎 first asks for an optional reason. Sent to the turn's feedback URL with
   *  the headers of every other call; a failure shows its error and leaves the buttons to try again. */
  Turn.prototype.addFeedback = function (convId, turnId) {
    var self = this;
    var box = el("div", "cob-feedback");
    box.setAttribute("data-turn-id", String(turnId));
    var row = el("div", "cob-feedback-row");
    row.appendChild(label(this, el("span", "cob-feedback-ask"), "text", "feedbackAsk"));
    function rateButton(rating, icon, key) {
      var b = el("button", "cob-rate cob-rate-" + rating);
      b.appendChild(svg(icon));
      b.type = "button";
      b.setAttribute("data-feedback", rating);
      b.setAttribute("aria-pressed", "false");
      label(self, b, "aria-label", key);
      label(self, b, "title", key);
      row.appendChild(b);
      return b;
    }
    var up = rateButton("up", ICON_UP, "feedbackUp");
    var down = rateButton("down", ICON_DOWN, "feedbackDown");
    var form = el("div", "cob-feedback-form");
    form.hidden = true;
    var reason = el("textarea", "cob-feedback-reason");
    reason.setAttribute("data-feedback-reason", "");
    reason.setAttribute("maxlength", String(FEEDBACK_REASON_MAX));
    reason.rows = 2;
    label(this, reason, "placeholder", "feedbackReason");
    label(this, reason, "aria-label", "feedbackReason");
    var sendBtn = label(this, el("button", "cob-btn cob-btn-primary cob-feedback-send"), "text", "feedbackSend");
    sendBtn.type = "button";
    sendBtn.setAttribute("data-feedback-send", "");
    form.appendChild(reason);
    form.appendChild(sendBtn);
    var result = el("div", "cob-feedback-result");
    result.setAttribute("role", "status");
    box.appendChild(row);
    box.appendChild(form);
    box.appendChild(result);

    function pressed(rating) {
      up.setAttribute("aria-pressed", rating === "up" ? "true" : "false");
      down.setAttribute("aria-pressed", rating === "down" ? "true" : "false");
    }
    function lock(on) { up.disabled = down.disabled = sendBtn.disabled = reason.disabled = on; }
    function submit(rating) {
      lock(true);
      pressed(rating);
      box.setAttribute("data-state", "sending");
      var body = JSON.stringify({ rating: rating, reason: rating === "down" ? reason.value.trim().slice(0, FEEDBACK_REASON_MAX) : "" });
      var url = API + "/v1/conversations/" + encodeURIComponent(convId) + "/turns/" + encodeURIComponent(String(turnId)) + "/feedback";
      fetch(url, { method: "POST", headers: headers(true), body: body, credentials: "omit" }).then(function (res) {
        if (res.ok) return { ok: true };
        return errorFromResponse(res).then(function (err) { return { error: err.message }; });
      }, function () { return { error: self.t().network }; }).then(function (r) {
        mutate(function () {
          result.className = "cob-feedback-result" + (r.ok ? "" : " cob-error");
          result.textContent = r.ok ? self.t().feedbackThanks : r.error;
          if (r.ok) form.hidden = true;
        });
        box.setAttribute("data-state", r.ok ? "sent" : "error");
        if (r.ok) box.setAttribute("data-rating", rating);
        else { // the answer and the reason stay: the visitor may try again
          lock(false);
          pressed(rating === "down" ? "down" : null);
        }
      });
    }
    up.addEventListener("click", function () { submit("up"); });
    down.addEventListener("click", function () {
      pressed("down");
      mutate(function () { form.hidden = false; });
      try { reason.focus({ preventScroll: true }); } catch (e) { reason.focus(); }
    });
    sendBtn.addEventListener("click", function () { submit("down"); });
    var slot = this.slotFeedback;
    mutate(function () { slot.appendChild(box); });
    this.tidy();
  };

  Turn.prototype.finish = function (status) {
    this.status = status;
    this.stopTyping();
    this.node.setAttribute("data-status", status);
    this.node.removeAttribute("aria-busy");
    this.tidy();
    scrollToBottom(); // the whole turn (notices, chips) in view once it is over
  };

  /** One parsed SSE event. Returns nothing; unknown names are ignored. */
  Turn.prototype.handle = function (name, payload) {
    var p = payload && typeof payload === "object" ? payload : {};
    switch (name) {
      case "provider":
        if (p.name) this.node.setAttribute("data-provider", String(p.name));
        if (p.model) this.node.setAttribute("data-model", String(p.model));
        break;
      case "tool":
        this.searching = true;
        if (this.typing.parentNode) this.typingLabel.textContent = this.t().searching;
        if (p.name) this.node.setAttribute("data-last-tool", String(p.name));
        break;
      case "verify":
        ["ok", "claims", "supported", "unsupported", "exempt", "revised"].forEach(function (k) {
          if (p[k] !== undefined && p[k] !== null && typeof p[k] !== "object") this.node.setAttribute("data-verify-" + k, String(p[k]));
        }, this);
        break;
      case "citations":
        this.citations = (Array.isArray(p.items) ? p.items : []).filter(function (c) { return c && c.n != null; }).map(function (c) {
          return { n: c.n, id: c.id, title: c.title ? String(c.title) : "", path: c.path ? String(c.path) : "", url: c.url ? String(c.url) : "" };
        });
        if (this.sources && this.sources.box.parentNode) this.sources.box.parentNode.removeChild(this.sources.box);
        this.sources = null;
        if (this.text) this.render();
        break;
      case "text":
        if (typeof p.d === "string" && p.d) {
          this.text += p.d;
          this.stopTyping();
          this.render();
        }
        break;
      case "rendered":
        if (typeof p.html === "string" && p.html && this.text) {
          this.html = p.html;
          this.render();
        }
        break;
      case "section":
        this.addSection(p.id, p.description);
        break;
      case "handoff":
        this.handoff = true;
        // the answer usually says it already: then the notice says what happens next instead of repeating it
        var said = typeof p.message === "string" && p.message && this.text.indexOf(p.message) === -1;
        this.addNotice("handoff", said ? p.message : { key: "handoffNote" });
        break;
      case "followups":
        this.addFollowups(p.items);
        break;
      case "card":
        this.addCard(p);
        break;
      case "booking_window":
        this.addBooking(p);
        break;
      case "error":
        this.addNotice("error", typeof p.message === "string" && p.message ? p.message : { key: "error" }, p.retryable === true);
        break;
      case "done":
        this.done = true;
        if (p.conversation_id) setConversation(String(p.conversation_id));
        if (typeof p.language === "string" && p.language) this.speak(p.language);
        this.markPartial(p.missing);
        if (p.truncated === true) {
          this.addNotice("truncated", { key: "truncated" });
          this.finish("truncated");
        } else {
          this.finish(typeof p.status === "string" && p.status ? p.status : "answered");
          if ((this.status === "answered" || this.status === "partial") && p.conversation_id && turnIdOf(p.turn_id) !== null) {
            this.addFeedback(String(p.conversation_id), turnIdOf(p.turn_id));
          }
        }
        break;
      default:
        break; // unknown events are ignored (forward compatibility)
    }
  };

  // ---------------------------------------------------------------- talking to the server

  function setConversation(id) {
    conversationId = id;
    storeSet(STORE_CONV, id);
  }

  function runTurn(text) {
    busy = true;
    updateSend();
    userMessage(text);
    var turn = new Turn(text);

    function fail(kind, message, retryable, status) {
      turn.addNotice(kind, message, retryable);
      turn.finish(status);
    }

    var body = JSON.stringify({ message: text, conversation_id: conversationId || null });
    var controller = typeof AbortController === "function" ? new AbortController() : null;
    return fetch(API + "/v1/chat", {
      method: "POST",
      headers: headers(true),
      body: body,
      credentials: "omit",
      signal: controller ? controller.signal : undefined
    }).then(function (res) {
      if (!res.ok) {
        return errorFromResponse(res).then(function (err) {
          if (res.status === 404 && /conversation/i.test(err.code)) setConversation(null); // stale id: next message starts anew
          fail("error", err.message, err.retryable, "error");
        });
      }
      return readStream(res, turn, controller).then(function () {
        if (!turn.done) { // the stream ended without `done`: keep the partial text, never present it as complete
          turn.addNotice("truncated", { key: "truncated" });
          turn.finish("truncated");
        }
      });
    }, function () {
      fail("error", { key: "network" }, true, "error");
    }).catch(function (e) {
      if (!turn.status) fail("error", { key: "error" }, true, "error");
      if (window.console && console.warn) console.warn("[cobertura]", e);
    }).then(function () {
      busy = false;
      updateSend();
      if (turn.handoff && conversationId) startHandoff(conversationId);
      if (!ui.panel.hidden && !isTouch()) { try { ui.input.focus({ preventScroll: true }); } catch (e) { /* ignore */ } }
      return turn.status;
    });
  }

  function fullScreen() { return !!(window.matchMedia && window.matchMedia("(max-width: 480px)").matches); }
  function isTouch() { return window.matchMedia && window.matchMedia("(pointer: coarse)").matches; }

  /** Read the SSE body to its end. Resolves when the stream ends (cleanly or not). */
  function readStream(res, turn, controller) {
    var parser = new SSEParser(function (name, data) {
      var payload;
      try { payload = JSON.parse(data); } catch (e) { return; } // half an event from a cut stream, or not JSON
      try { turn.handle(name, payload); } catch (e) { if (window.console && console.warn) console.warn("[cobertura]", name, e); }
    });
    if (!res.body || !res.body.getReader) { // very old engines: no streaming, parse the whole body at once
      return res.text().then(function (t) { parser.feed(t); parser.end(); }, function () { parser.end(); });
    }
    var reader = res.body.getReader();
    var decoder = new TextDecoder("utf-8");
    var idle = null;
    function arm() {
      clearTimeout(idle);
      idle = setTimeout(function () {
        try { reader.cancel(); } catch (e) { /* ignore */ }
        if (controller) controller.abort();
      }, IDLE_TIMEOUT_MS);
    }
    arm();
    function pump() {
      return reader.read().then(function (r) {
        if (r.done) {
          parser.feed(decoder.decode());
          parser.end();
          return;
        }
        arm();
        parser.feed(decoder.decode(r.value, { stream: true }));
        if (turn.done) { // `done` is terminal: stop reading even if the server keeps the socket open
          try { reader.cancel(); } catch (e) { /* ignore */ }
          parser.end();
          return;
        }
        return pump();
      });
    }
    return pump().catch(function () {
      parser.end(); // network drop mid-stream: whatever arrived stays; the caller marks the turn truncated
    }).then(function () { clearTimeout(idle); });
  }

  function ask(text) {
    text = text == null ? "" : String(text).trim();
    if (!text) return Promise.resolve(null);
    if (!ui.panel) build();
    if (ui.panel.hidden) open();
    var run = current.then(function () { return runTurn(text); });
    current = run.catch(function () { /* keep the queue alive */ });
    return run;
  }

  // ---------------------------------------------------------------- handoff: replies from a person of the team

  function saveHandoff() { storeSet(STORE_HANDOFF, handoff ? JSON.stringify(handoff) : null); }

  function startHandoff(convId) {
    if (!handoff || handoff.conversation_id !== convId) handoff = { conversation_id: convId, after: null, seen: [] };
    saveHandoff();
    schedulePoll(POLL_MS);
  }

  function stopHandoff() {
    clearTimeout(pollTimer);
    pollTimer = null;
    handoff = null;
    saveHandoff();
  }

  function schedulePoll(ms) {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(poll, ms);
  }

  function poll() {
    pollTimer = null;
    if (!handoff || !ui.root || !ui.root.isConnected) return; // the widget was removed from the page
    if (polling || document.hidden) { schedulePoll(POLL_MS); return; }
    polling = true;
    var url = API + "/v1/conversations/" + encodeURIComponent(handoff.conversation_id) + "/replies"
      + (handoff.after != null && handoff.after !== "" ? "?after=" + encodeURIComponent(handoff.after) : "");
    fetch(url, { method: "GET", headers: headers(false), credentials: "omit" }).then(function (res) {
      if (res.status >= 400 && res.status < 500) { stopHandoff(); return; }
      if (!res.ok) return;
      return res.json().then(function (j) {
        var replies = j && Array.isArray(j.replies) ? j.replies : [];
        replies.forEach(function (r) {
          if (!r || r.id == null || !handoff) return;
          var id = String(r.id);
          if (handoff.seen.indexOf(id) !== -1) return;
          handoff.seen.push(id);
          if (handoff.seen.length > 200) handoff.seen = handoff.seen.slice(-200);
          handoff.after = r.id;
          staffMessage(r);
        });
        saveHandoff();
      });
    }).catch(function () { /* offline for a moment: try again next tick */ }).then(function () {
      polling = false;
      if (handoff && !pollTimer) schedulePoll(POLL_MS);
    });
  }

  function staffMessage(r) {
    var m = el("div", "cob-msg cob-staff");
    m.setAttribute("data-reply-id", String(r.id));
    var who = el("div", "cob-label", T.staff);
    var d = r.at != null ? new Date(typeof r.at === "number" && r.at < 1e12 ? r.at * 1000 : r.at) : null;
    if (d && !isNaN(d)) {
      var time = el("time", null, d.toLocaleTimeString(view.lang, { hour: "2-digit", minute: "2-digit" }));
      time.setAttribute("datetime", d.toISOString());
      who.appendChild(time);
    }
    var body = el("div", "cob-body");
    appendText(body, r.text == null ? "" : r.text);
    m.appendChild(who);
    m.appendChild(body);
    addToList(m);
    if (ui.panel.hidden) ui.badge.hidden = false;
  }

  // ---------------------------------------------------------------- host-page highlight for `section`

  var fallbackTimers = [];
  function highlight(target) {
    try { target.scrollIntoView({ behavior: "smooth", block: "center" }); } catch (e) { target.scrollIntoView(); }
    target.classList.remove("cobertura-highlight");
    void target.offsetWidth; // restart the pulse
    target.classList.add("cobertura-highlight");
    var prev = highlightTimers ? highlightTimers.get(target) : null;
    if (prev) clearTimeout(prev);
    var t = setTimeout(function () { target.classList.remove("cobertura-highlight"); }, HIGHLIGHT_MS);
    if (highlightTimers) highlightTimers.set(target, t); else fallbackTimers.push(t);
  }

  // ---------------------------------------------------------------- boot

  function boot() {
    if (!SITE_KEY && window.console && console.warn) console.warn("[cobertura] missing data-site-key on the widget script tag");
    build();
    if (handoff && handoff.conversation_id && handoff.conversation_id === conversationId) schedulePoll(1000);
    else if (handoff) stopHandoff();
  }

  window.Cobertura = {
    __cobertura: true,
    version: "1",
    open: function () { if (!ui.panel) build(); open(); },
    close: function () { close(); },
    toggle: function () { if (!ui.panel) build(); if (ui.panel.hidden) open(); else close(); },
    /** Ask a question as if typed; opens the panel. Resolves to the turn's final status ("answered", "partial", …). */
    ask: ask,
    /** Forget the conversation (next message starts a new one) and clear the panel. */
    reset: function () {
      setConversation(null);
      stopHandoff();
      if (ui.list) {
        while (ui.list.firstChild) ui.list.removeChild(ui.list.firstChild);
        ui.list.appendChild(ui.empty);
      }
    },
    get conversationId() { return conversationId; },
    get isOpen() { return !!(ui.panel && !ui.panel.hidden); },
    get busy() { return busy; }
  };

  if (document.body) boot();
  else document.addEventListener("DOMContentLoaded", boot);
})();
