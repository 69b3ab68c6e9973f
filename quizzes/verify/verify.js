// Checks a gradacc certificate in the browser, the same checks as `gradacc-certify verify`
// (quizzes/gradacc_grader/certificates/verification.py): the issuer's Ed25519 signature
// (WebCrypto), the published registry (registry.json) and its revocations. It reads only
// issuer.pub and registry.json beside this page; nothing leaves the browser.

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXY"; // Crockford's base 32 without Z
const ID_LENGTH = 12; // 11 random characters and a check character
const FORMAT = "gradacc-certificate/1";
const REGISTRY_FORMAT = "gradacc-certificate-registry/1";
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

export class Invalid extends Error {}

// The check character of an ID's random part: sum of position x value, modulo 31.
export function checkCharacter(body) {
  let total = 0;
  for (let i = 0; i < body.length; i++) total += (i + 1) * ALPHABET.indexOf(body[i]);
  return ALPHABET[total % ALPHABET.length];
}

// The ID as printed (groups of four), from what someone typed; Invalid says what is wrong.
export function normalizeId(text) {
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

// The published registry and the issuer's public key (issuer.pub, PEM), loaded once. A course
// that has issued nothing yet publishes an empty registry (public_key null) and no key.
let issuer = null;
export function loadIssuer(folder = ".") {
  issuer ??= (async () => {
    const registry = JSON.parse(await fetchText(`${folder}/registry.json`));
    if (registry.format !== REGISTRY_FORMAT || typeof registry.certificates !== "object" ||
        typeof registry.revocations !== "object") {
      throw new Error("registry.json is not a certificate registry");
    }
    if (registry.public_key === null) {
      throw new Error("this site has published no certificates yet");
    }
    const pem = await fetchText(`${folder}/issuer.pub`);
    const body = pem.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, "").replace(/\s/g, "");
    const key = await crypto.subtle.importKey(
      "spki", base64Bytes(body, "issuer.pub"), { name: "Ed25519" }, true, ["verify"]);
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", key));
    if (registry.public_key !== btoa(String.fromCharCode(...raw))) {
      throw new Error("registry.json was exported for another key than issuer.pub");
    }
    return { key, registry };
  })();
  return issuer;
}

async function fetchText(address) {
  const response = await fetch(address, { cache: "no-store" });
  if (!response.ok) {
    throw new Error(`this site does not publish ${address} (${response.status})`);
  }
  return response.text();
}

// The record inside a signed entry, once the issuer's signature of its exact text is checked.
async function readSigned(entry, key) {
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
  const record = JSON.parse(entry.signed);
  if (record === null || typeof record !== "object" || Array.isArray(record)) {
    throw new Invalid("the signed record is not a JSON object");
  }
  return record;
}

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
export async function checkId(text) {
  const { key, registry } = await loadIssuer();
  const { record } = await registryRecord(registry, key, normalizeId(text));
  return record;
}

// The facts of a certificate file's text, checked against the key and the registry.
export async function checkFile(text) {
  const { key, registry } = await loadIssuer();
  if (text.length > MAX_FILE_BYTES) throw new Invalid("this file is too large to be a certificate");
  let document;
  try {
    document = JSON.parse(text);
  } catch {
    throw new Invalid("this file is not a certificate: it is not JSON");
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
  return record;
}

// --- the page ---

function show(kind, title, rows = []) {
  const verdict = document.getElementById("verdict");
  verdict.className = kind;
  const heading = document.createElement("h2");
  heading.textContent = title;
  const table = document.createElement("table");
  for (const [label, value] of rows) {
    const row = table.insertRow();
    const th = document.createElement("th");
    th.textContent = label;
    row.append(th);
    row.insertCell().textContent = value;
  }
  verdict.replaceChildren(heading, ...(rows.length ? [table] : []));
}

async function report(check) {
  show("working", "Checking…");
  try {
    const r = await check();
    show("valid", `Valid certificate ${r.id}`, [
      ["Name", r.name], ["Course", r.course_title ?? r.course],
      ["Assignment", r.assignment_title ?? r.assignment], ...(r.issuer ? [["Issuer", r.issuer]] : []),
      ["Score", `${r.score} of ${r.max_score}`], ["Date", r.date],
      ["Course version", r.course_version], ["Registry", "listed, not revoked"],
    ]);
  } catch (error) {
    const title = error instanceof Invalid ? "Not valid" : "Cannot check";
    show("invalid", `${title}: ${error.message}`);
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
  const asked = new URLSearchParams(location.search).get("id"); // the QR code's address
  if (asked) {
    input.value = asked;
    report(() => checkId(asked));
  }
}

if (typeof document !== "undefined") start();
