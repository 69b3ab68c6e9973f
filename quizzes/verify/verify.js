// Checks a gradacc certificate in the browser, the same checks as `gradacc-certify verify`
// (quizzes/gradacc_grader/certificates/verification.py and published.py): the issuer's Ed25519
// signature (WebCrypto) of the published registry as a whole and of each record in it, the
// registry's dates, and its sequence number against the newest registry this browser has seen
// (localStorage). Served over http(s), it reads only issuer.pub and registry.json beside this
// page. Opened from disk (file://), where browsers allow no fetch, it reads registry.js, the
// copy of both that the site build writes (gradacc_grader.certificates.offline).
//
// A classic script, not a module: Chromium refuses module scripts on file://. What tests and
// other scripts may call is on globalThis.gradaccVerify. One file, longer than our modules
// usually are, on purpose: the page has one script to load in order, from disk as from a site.

(() => {
  "use strict";

  const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXY"; // Crockford's base 32 without Z
  const ID_LENGTH = 12; // 11 random characters and a check character
  const FORMAT = "gradacc-certificate/1";
  const REGISTRY_FORMAT = "gradacc-certificate-registry/2";
  const OLD_REGISTRY_FORMAT = "gradacc-certificate-registry/1";
  const OFFLINE_COPY = "registry.js";
  const SEEN_PREFIX = "gradacc-registry-seen/";
  const CLOCK_SLACK_MS = 10 * 60 * 1000; // as published.CLOCK_SLACK
  const MAX_FILE_BYTES = 100000;
  const FIELDS_BEFORE_TITLES = {
    type: "string", id: "string", course: "string", assignment: "string", name: "string",
    score: "number", max_score: "number", date: "string", course_version: "string",
  };
  // records.py: certificates since 2026-12 also state these; older ones stay valid without
  const FIELDS = {
    ...FIELDS_BEFORE_TITLES, course_title: "string", issuer: "string", assignment_title: "string",
  };
  const fieldsOf = (record) =>
    Object.keys(record).sort().join() === Object.keys(FIELDS_BEFORE_TITLES).sort().join()
      ? FIELDS_BEFORE_TITLES : FIELDS;
  const REVOCATION_FIELDS = { type: "string", id: "string", date: "string", reason: "string" };
  const REGISTRY_FIELDS = [
    "certificates", "chain", "issued", "next_update", "public_key", "revocations", "sequence", "type",
  ];

  class Invalid extends Error {}

  // The check character of an ID's random part: sum of position x value, modulo 31.
  function checkCharacter(body) {
    let total = 0;
    for (let i = 0; i < body.length; i++) total += (i + 1) * ALPHABET.indexOf(body[i]);
    return ALPHABET[total % ALPHABET.length];
  }

  // The ID as printed (groups of four), from what someone typed; Invalid says what is wrong.
  function normalizeId(text) {
    const chars = text.replace(/[\s-]/g, "").toUpperCase()
      .replace(/O/g, "0").replace(/[IL]/g, "1");
    if (chars.length !== ID_LENGTH) {
      throw new Invalid(`an ID has ${ID_LENGTH} characters, like 7K3M-Q9XT-2HPW; this one has ${chars.length}`);
    }
    const wrong = [...chars].filter((c) => !ALPHABET.includes(c));
    if (wrong.length) {
      throw new Invalid(`IDs never use ${JSON.stringify(wrong.join(""))}: check what you typed`);
    }
    if (checkCharacter(chars.slice(0, -1)) !== chars.slice(-1)) {
      throw new Invalid("the ID is mistyped: its last character does not match the others " +
                        "(a wrong or swapped character); copy it again from the certificate");
    }
    return chars.match(/.{1,4}/g).join("-");
  }

  function base64Bytes(text, what) {
    try {
      return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    } catch {
      throw new Invalid(`${what} is not base64`);
    }
  }

  // The first key that appears twice in one object of a JSON text already parsed, or null.
  // JSON.parse keeps the last of two; Python's reader refuses both, and so does this page.
  function duplicateKey(text) {
    const objects = []; // per open container: the keys seen (an object) or null (an array)
    let expectKey = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '"') {
        let end = i + 1;
        while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
        const keys = objects[objects.length - 1];
        if (expectKey && keys) {
          const key = JSON.parse(text.slice(i, end + 1));
          if (keys.has(key)) return key;
          keys.add(key);
        }
        expectKey = false;
        i = end;
      } else if (c === "{" || c === "[") {
        objects.push(c === "{" ? new Set() : null);
        expectKey = c === "{";
      } else if (c === "}" || c === "]") {
        objects.pop();
      } else if (c === ",") {
        expectKey = objects[objects.length - 1] instanceof Set;
      }
    }
    return null;
  }

  // A JSON object from text, refusing what Python's parse_json_object refuses.
  function parseObject(text, what) {
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      throw new Invalid(`${what} is not valid JSON`);
    }
    const twice = duplicateKey(text);
    if (twice !== null) throw new Invalid(`${what} is not valid JSON (key "${twice}" appears twice)`);
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new Invalid(`${what} is not valid: it is not a JSON object`);
    }
    return value;
  }

  // The record inside a signed entry, once the issuer's signature of its exact text is checked.
  async function readSigned(entry, key, what = "the signed record") {
    if (typeof entry?.signed !== "string" || typeof entry?.signature !== "string") {
      throw new Invalid("it has no signed text and signature");
    }
    const signature = base64Bytes(entry.signature, "the signature");
    const ok = await crypto.subtle.verify(
      { name: "Ed25519" }, key, signature, new TextEncoder().encode(entry.signed));
    if (!ok) {
      throw new Invalid("the signature does not match: the record was changed after signing, " +
                        "or it was not signed by this issuer's key");
    }
    return parseObject(entry.signed, what);
  }

  // --- the published registry (as published.py) ---

  function timeOf(text) {
    if (typeof text !== "string" || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(text)) {
      throw new Invalid(`the registry is malformed: ${JSON.stringify(text)} is not a time written YYYY-MM-DDTHH:MM:SSZ`);
    }
    const moment = Date.parse(text);
    if (Number.isNaN(moment) || new Date(moment).toISOString().slice(0, 19) + "Z" !== text) {
      throw new Invalid(`the registry is malformed: ${text} is not a moment in the calendar`);
    }
    return moment;
  }

  const when = (text) => `${text.slice(0, 10)} ${text.slice(11, 16)} UTC`;

  function ageText(ms) {
    const seconds = Math.max(0, Math.floor(ms / 1000));
    for (const [unit, size] of [["day", 86400], ["hour", 3600], ["minute", 60]]) {
      if (seconds >= size) {
        const count = Math.floor(seconds / size);
        return `${count} ${unit}${count > 1 ? "s" : ""}`;
      }
    }
    return "less than a minute";
  }

  // One line on a registry: its number, its age, when the next one is due.
  function describe(body, now = Date.now()) {
    return `number ${body.sequence}, issued ${when(body.issued)} ` +
      `(${ageText(now - timeOf(body.issued))} ago), next due by ${when(body.next_update)}`;
  }

  function checkBody(body) {
    const malformed = (why) => new Invalid(`the registry is malformed: ${why}`);
    if (Object.keys(body).sort().join() !== REGISTRY_FIELDS.join() ||
        body.type !== "gradacc-certificate-registry") {
      throw malformed("its fields are not those of a registry");
    }
    const { sequence, chain } = body;
    if (!Number.isInteger(sequence) || sequence < 1) {
      throw malformed(`its sequence number ${JSON.stringify(sequence)} is not a whole number from 1`);
    }
    if (!Array.isArray(chain) || !chain.every((h) => typeof h === "string" && /^[0-9a-f]{64}$/.test(h))) {
      throw malformed("its chain is not a list of SHA-256 hashes");
    }
    if (chain.length !== sequence - 1) {
      throw malformed(`number ${sequence} must list ${sequence - 1} earlier registries`);
    }
    if (timeOf(body.next_update) <= timeOf(body.issued)) {
      throw malformed("its next update is not after its time of issue");
    }
    for (const part of ["certificates", "revocations"]) {
      if (body[part] === null || typeof body[part] !== "object" || Array.isArray(body[part])) {
        throw malformed("its certificates and revocations are not objects");
      }
    }
    if (!Object.keys(body.revocations).every((id) => Object.hasOwn(body.certificates, id))) {
      throw malformed("it revokes a certificate it does not list");
    }
  }

  async function sha256Hex(text) {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  }

  // The registry inside registry.json's text, once shown authentic, current and not older than
  // one this browser has seen.
  async function checkRegistry(text, key, keyText, now = Date.now()) {
    const document = parseObject(text, "registry.json");
    if (document.format === OLD_REGISTRY_FORMAT) {
      throw new Invalid("this registry is of the old, unsigned format (gradacc-certificate-registry/1), " +
                        "in which entries could be deleted unnoticed: the issuer must export it again " +
                        "(gradacc-certify export --key ...)");
    }
    if (document.format !== REGISTRY_FORMAT) {
      throw new Invalid(`registry.json is not a certificate registry (format ${REGISTRY_FORMAT})`);
    }
    if (Object.keys(document).sort().join() !== "format,signature,signed") {
      throw new Invalid("registry.json must hold exactly format, signed and signature");
    }
    if (document.signed === null) throw new Unavailable("this site has published no certificates yet");
    let body;
    try {
      body = await readSigned(document, key, "the signed registry");
    } catch (error) {
      if (!error.message.startsWith("the signature does not match")) {
        throw new Invalid(`the registry is malformed (${error.message})`);
      }
      throw new Invalid("the registry's signature does not match the issuer's key: the registry " +
                        "was changed after it was signed (an entry added, removed or edited, any " +
                        "byte), or it was signed by another key");
    }
    checkBody(body);
    if (body.public_key !== keyText) {
      throw new Invalid("the registry names another issuer key than issuer.pub");
    }
    const issued = timeOf(body.issued);
    const due = timeOf(body.next_update);
    if (issued > now + CLOCK_SLACK_MS) {
      throw new Invalid(`the registry says it was issued on ${when(body.issued)}, in the future: ` +
                        "check this computer's clock");
    }
    if (now > due) {
      throw new Invalid(`stale: this registry (number ${body.sequence}, issued ${when(body.issued)}) ` +
                        `was due to be replaced by ${when(body.next_update)}, ${ageText(now - due)} ago; ` +
                        "a certificate revoked since then would still look valid here. Get the " +
                        "current registry.json from the issuer's site, or ask the issuer to publish one");
    }
    body.hash = await sha256Hex(document.signed);
    checkNotOlder(body);
    return body;
  }

  // As seen.py, with the browser's localStorage as the state file.
  function checkNotOlder(body) {
    const slot = SEEN_PREFIX + body.public_key;
    let mark = null;
    try {
      mark = JSON.parse(localStorage.getItem(slot) ?? "null");
    } catch {
      mark = null; // storage off, or an unreadable entry: nothing seen
    }
    if (mark && Number.isInteger(mark.sequence) && typeof mark.hash === "string") {
      if (body.sequence < mark.sequence) {
        throw new Invalid(`replayed: this is registry number ${body.sequence}, older than number ` +
                          `${mark.sequence}, which this browser has already checked; an old copy can ` +
                          "hide a revocation made since. Get the current registry.json from the issuer's site");
      }
      if (body.sequence === mark.sequence && body.hash !== mark.hash) {
        throw new Invalid(`another registry under the same number ${body.sequence} was checked in ` +
                          "this browser before: both are signed with the issuer's key, so the key " +
                          "was misused or stolen");
      }
      if (body.sequence > mark.sequence && body.chain[mark.sequence - 1] !== mark.hash) {
        throw new Invalid(`this registry (number ${body.sequence}) does not continue registry ` +
                          `number ${mark.sequence} checked in this browser before: its chain of ` +
                          "earlier registries differs, so one of them was not published by the issuer in order");
      }
      if (body.sequence <= mark.sequence) return;
    }
    try {
      localStorage.setItem(slot, JSON.stringify({ sequence: body.sequence, hash: body.hash }));
    } catch {
      // storage off (a private window may refuse it): this visit cannot remember the registry
    }
  }

  // --- loading the issuer's key and the registry ---

  // Not a verdict on a certificate: the page cannot check anything yet (it says why).
  class Unavailable extends Error {}

  async function fetchText(address) {
    const response = await fetch(address, { cache: "no-store" });
    if (!response.ok) {
      throw new Unavailable(`this site does not publish ${address} (${response.status})`);
    }
    return response.text();
  }

  function loadScript(address) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = address;
      script.onload = resolve;
      script.onerror = reject;
      document.head.append(script);
    });
  }

  const FROM_DISK_HELP =
    "This page was opened from a file (file://), where the browser lets it read no other file, " +
    `and there is no ${OFFLINE_COPY} beside it (the copy of registry.json and issuer.pub that ` +
    "`make site` writes). Open site/verify/index.html of the built site, or serve this folder " +
    "and open it over http: python -m http.server -d FOLDER 8000, then http://127.0.0.1:8000/";

  // The texts of registry.json and issuer.pub: fetched beside the page, or, from disk, read
  // from registry.js.
  async function publishedTexts() {
    if (location.protocol !== "file:") {
      const registry = await fetchText("./registry.json");
      nothingPublished(registry); // the page as committed has no issuer.pub to fetch
      return { registry, pem: await fetchText("./issuer.pub"), source: "registry.json" };
    }
    try {
      await loadScript(OFFLINE_COPY);
    } catch {
      throw new Unavailable(FROM_DISK_HELP);
    }
    const copy = globalThis.gradaccPublished;
    if (typeof copy?.["registry.json"] !== "string") throw new Unavailable(FROM_DISK_HELP);
    nothingPublished(copy["registry.json"]);
    if (typeof copy["issuer.pub"] !== "string") {
      throw new Unavailable(`${OFFLINE_COPY} holds no issuer.pub: the site was built without the issuer's public key`);
    }
    return {
      registry: copy["registry.json"], pem: copy["issuer.pub"],
      source: `${OFFLINE_COPY} (the copy of registry.json built with this page)`,
    };
  }

  function nothingPublished(registryText) {
    let document = null;
    try {
      document = JSON.parse(registryText);
    } catch {
      return; // checkRegistry says what is wrong with it
    }
    if (document?.format === REGISTRY_FORMAT && document.signed === null) {
      throw new Unavailable("this site has published no certificates yet");
    }
  }

  async function importKey(pem) {
    const body = pem.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, "").replace(/\s/g, "");
    try {
      return await crypto.subtle.importKey(
        "spki", base64Bytes(body, "issuer.pub"), { name: "Ed25519" }, true, ["verify"]);
    } catch {
      throw new Unavailable("issuer.pub is not an Ed25519 public key in PEM format");
    }
  }

  // The issuer's key and the checked registry, loaded once per visit.
  let issuer = null;
  function loadIssuer() {
    issuer ??= (async () => {
      const texts = await publishedTexts();
      const key = await importKey(texts.pem);
      const raw = new Uint8Array(await crypto.subtle.exportKey("raw", key));
      const registry = await checkRegistry(texts.registry, key, btoa(String.fromCharCode(...raw)));
      return { key, registry, source: texts.source };
    })();
    return issuer;
  }

  // --- the checks of a certificate (as verification.py) ---

  function checkFields(record, fields, kind) {
    const keys = Object.keys(record).sort().join();
    if (keys !== Object.keys(fields).sort().join()) throw new Invalid("its fields are wrong");
    for (const [name, type] of Object.entries(fields)) {
      const value = record[name];
      const ok = type === "string" ? typeof value === "string" && value.length <= 200
        : typeof value === "number" && Number.isFinite(value);
      if (!ok) throw new Invalid(`its field ${name} is not a ${type}`);
    }
    if (record.type !== kind) throw new Invalid(`it is a ${record.type} record, not a ${kind}`);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(record.date)) throw new Invalid("its date is malformed");
  }

  function checkRecord(record) {
    checkFields(record, fieldsOf(record), "gradacc-certificate");
    if (normalizeId(record.id) !== record.id) throw new Invalid("its ID is not written as issued");
    if (!(record.score >= 0 && record.max_score > 0)) throw new Invalid("its score is impossible");
    if (!record.name) throw new Invalid("the certificate names nobody");
  }

  // The registry's checked record of an ID, unless the ID is unknown or revoked.
  async function registryRecord(registry, key, id) {
    if (!Object.hasOwn(registry.certificates, id)) {
      throw new Invalid(`unknown ID: the registry holds no certificate ${id}`);
    }
    const entry = registry.certificates[id];
    const record = await readSigned(entry, key);
    checkRecord(record);
    if (record.id !== id) throw new Invalid(`the registry's record under ${id} is of ${record.id}`);
    if (Object.hasOwn(registry.revocations, id)) {
      const revocation = await readSigned(registry.revocations[id], key);
      checkFields(revocation, REVOCATION_FIELDS, "gradacc-revocation");
      if (revocation.id !== id) throw new Invalid("the registry's revocation is of another ID");
      throw new Invalid(`revoked: certificate ${id} was revoked on ${revocation.date} (${revocation.reason})`);
    }
    return { entry, record };
  }

  // The facts of the certificate with this ID, from the registry, checked.
  async function checkId(text) {
    const { key, registry } = await loadIssuer();
    const { record } = await registryRecord(registry, key, normalizeId(text));
    return { record, registry };
  }

  // The facts of a certificate file's text, checked against the key and the registry.
  async function checkFile(text) {
    const { key, registry } = await loadIssuer();
    if (text.length > MAX_FILE_BYTES) throw new Invalid("this file is too large to be a certificate");
    let document;
    try {
      document = JSON.parse(text);
    } catch {
      throw new Invalid("this file is not a certificate: it is not JSON");
    }
    const twice = duplicateKey(text);
    if (twice !== null) {
      throw new Invalid(`this file is not a certificate: its key "${twice}" appears twice`);
    }
    const parts = ["certificate", "format", "signature", "signed"].join();
    if (document === null || typeof document !== "object" || document.format !== FORMAT ||
        Object.keys(document).sort().join() !== parts) {
      throw new Invalid("this file is not a gradacc certificate");
    }
    const record = await readSigned(document, key);
    checkRecord(record);
    const copy = document.certificate;
    const fields = Object.keys(fieldsOf(record));
    const changed = fields.filter((name) => copy?.[name] !== record[name]);
    if (changed.length || Object.keys(copy ?? {}).length !== fields.length) {
      throw new Invalid(`the readable copy was changed: it differs from the signed record in ${changed.join(", ") || "its fields"}`);
    }
    const { entry } = await registryRecord(registry, key, record.id);
    if (entry.signed !== document.signed) {
      throw new Invalid(`the registry holds another certificate under the ID ${record.id}`);
    }
    return { record, registry };
  }

  // --- the page ---

  function show(element, kind, title, rows = []) {
    element.className = kind;
    const heading = document.createElement(element.id === "verdict" ? "h2" : "p");
    heading.textContent = title;
    const table = document.createElement("table");
    for (const [label, value] of rows) {
      const row = table.insertRow();
      const th = document.createElement("th");
      th.textContent = label;
      row.append(th);
      row.insertCell().textContent = value;
    }
    element.replaceChildren(heading, ...(rows.length ? [table] : []));
  }

  const titleOf = (error) => (error instanceof Invalid ? "Not valid" : "Cannot check");

  async function report(check) {
    const verdict = document.getElementById("verdict");
    show(verdict, "working", "Checking…");
    try {
      const { record: r, registry } = await check();
      show(verdict, "valid", `Valid certificate ${r.id}`, [
        ["Name", r.name], ["Course", r.course_title ?? r.course],
        ["Assignment", r.assignment_title ?? r.assignment], ...(r.issuer ? [["Issuer", r.issuer]] : []),
        ["Score", `${r.score} of ${r.max_score}`], ["Date", r.date],
        ["Course version", r.course_version], ["Registry", "listed, not revoked"],
        ["Registry date", describe(registry)],
      ]);
    } catch (error) {
      const reason = error instanceof Invalid || error instanceof Unavailable ? error.message
        : `an unexpected error: ${error}`;
      show(verdict, "invalid", `${titleOf(error)}: ${reason}`);
    }
  }

  // Says at once which registry the page checks against, or why it cannot check at all.
  async function showRegistry() {
    const status = document.getElementById("registry-status");
    try {
      const { registry, source } = await loadIssuer();
      show(status, "current", `Registry of certificates: ${describe(registry)}; read from ${source}.`);
    } catch (error) {
      const reason = error instanceof Invalid || error instanceof Unavailable ? error.message : `${error}`;
      show(status, "refused", `The registry of certificates cannot be used: ${reason}`);
    }
  }

  function start() {
    const input = document.getElementById("certificate-id");
    document.getElementById("by-id").addEventListener("submit", (event) => {
      event.preventDefault();
      report(() => checkId(input.value));
    });
    document.getElementById("certificate-file").addEventListener("change", (event) => {
      const file = event.target.files[0];
      if (file) report(async () => checkFile(await file.text()));
    });
    showRegistry();
    const asked = new URLSearchParams(location.search).get("id"); // the QR code's address
    if (asked) {
      input.value = asked;
      report(() => checkId(asked));
    }
  }

  globalThis.gradaccVerify = { Invalid, normalizeId, checkCharacter, duplicateKey, checkId, checkFile };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
