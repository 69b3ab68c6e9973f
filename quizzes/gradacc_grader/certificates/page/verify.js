// Checks an Open Badges 3.0 credential (a VC-JWT, or a baked PNG badge carrying one) in the
// browser, as `gradacc-certify verify` does (gradacc_grader/certificates/checking.py): the
// Ed25519 signature (WebCrypto) by a key of the issuer's jwks.json, the JWT claims against the
// credential, the issuer's address against this page's own, and each Bitstring Status List
// (signed by the same key, current, not older than one seen here). localStorage remembers the
// issuer's key fingerprint and the newest status lists. Served over http(s), the page reads
// only the files beside it; opened from disk (file://), where a browser allows no fetch, it
// reads published.js, the copy `gradacc-certify publish` writes.
//
// A classic script, not a module: Chromium refuses module scripts on file://. What tests may
// call is on globalThis.gradaccVerify. One file on purpose: one script to load, from disk too.

(() => {
  "use strict";

  const CLOCK_SLACK_MS = 10 * 60 * 1000;
  const KEY_SEEN = "gradacc-issuer-key/";
  const LIST_SEEN = "gradacc-status-list/";
  const MAX_BYTES = 2000000;

  // --- words, in English and Yorùbá ---

  const TEXT = {
    en: {
      title: "Check a gradacc certificate",
      intro: "Choose the credential file (.jwt) or the badge image (.png) the learner gave you: " +
        "this page checks the issuer's signature and status list, here in your browser. Nothing " +
        "you choose leaves your computer.",
      fileLabel: "Credential file or badge image",
      pasteLabel: "or paste the credential (VC-JWT)",
      check: "Check",
      howTitle: "How the check works",
      how: "A certificate is an Open Badges 3.0 credential, signed by the issuer with an Ed25519 " +
        "key. The issuer publishes its key (jwks.json) and two signed status lists at its own " +
        "address, this folder, and nothing else: no one's name. The page checks the signature " +
        "with the key published here, that the credential names this address as its issuer, and " +
        "that the status lists, signed by the same key and renewed weekly, mark it neither " +
        "revoked nor superseded. It remembers the issuer's key and the newest status lists in " +
        "this browser, and says so when a key changes or an older list comes back. The same " +
        "checks run on the command line: gradacc-certify verify FILE.",
      checking: "Checking…",
      valid: (id) => `Valid certificate ${id}`,
      invalid: "Not valid",
      cannot: "Cannot check",
      asked: (id) => `You came here for certificate ${id}. This page lists no certificates (it ` +
        "publishes no one's name): choose the credential file or badge image the learner gave you.",
      rows: {
        name: "Name", achievement: "Achievement", course: "Course", issuer: "Issuer",
        place: "Issuer's address", score: "Score", validFrom: "Valid from", key: "Issuer's key",
        status: "Status",
      },
      score: (value, max, needed) => `${value} of ${max} (pass mark ${needed})`,
      standing: "not revoked, not superseded",
      fromDisk: (place, fp) => "Opened from disk: checked against the copy of the issuer's key " +
        `saved with this page, not fetched from ${place}. Compare its fingerprint, ${fp}, with ` +
        "the one printed on the certificate.",
      reasons: {
        notCredential: () => "this is not an Open Badges credential (a VC-JWT, or a badge image " +
          "that carries one)",
        signature: () => "the signature does not match: the credential was changed after " +
          "signing, or it was not signed by the issuer's key",
        otherKey: () => "it was signed by a key the issuer does not publish (another key)",
        claims: (p) => `its JWT claim ${p.claim} does not match the credential it carries`,
        elsewhere: (p) => `this page is hosted at ${p.page}, not at the issuer's own address ` +
          `${p.place}: only the issuer's own page checks against the issuer's key. Open ${p.place}`,
        otherIssuer: (p) => `the credential names another issuer (${p.issuer}) than the one ` +
          "this copy of the page belongs to",
        keyChanged: (p) => "the key published for this issuer changed since this browser last " +
          `checked it (before ${p.before}, now ${p.now}): ask the issuer, by another channel, ` +
          "which is theirs",
        revoked: () => "revoked: the issuer's status list marks this credential revoked",
        superseded: () => "superseded: the issuer re-issued this credential; ask the learner " +
          "for the current one",
        stale: (p) => `stale: the status list was due to be replaced by ${p.due}; a credential ` +
          "revoked since would still look valid",
        replayed: (p) => `replayed: this status list (issued ${p.issued}, due by ${p.due}) is ` +
          "older than one this browser has already checked",
        listForged: () => "the status list is not signed by the issuer's key",
        listWrong: () => "the status list is not the one the credential names",
        future: (p) => `it says it was issued on ${p.when}, in the future: check this computer's clock`,
        noStatus: () => "signature valid, status unknown: the status list cannot be read",
        unavailable: (p) => `this site does not publish ${p.file}`,
        noCopy: () => "opened from disk without published.js beside it: open the issuer's page " +
          "over https, or serve this folder (python -m http.server)",
      },
    },
    yo: {
      title: "Ṣàyẹ̀wò ìwé-ẹ̀rí gradacc",
      intro: "Ẹ yan fáìlì ìwé-ẹ̀rí (.jwt) tàbí àwòrán àmì-ẹ̀yẹ (.png) tí akẹ́kọ̀ọ́ fún yín: " +
        "ojú-ìwé yìí yóò ṣàyẹ̀wò ìbuwọ́lù ẹni tó fún un ní ìwé-ẹ̀rí àti àkọsílẹ̀ ipò rẹ̀, níbí " +
        "nínú ẹ̀rọ aṣàwákiri yín. Kò sí ohun tí ẹ yàn tí yóò kúrò lórí kọ̀ǹpútà yín.",
      fileLabel: "Fáìlì ìwé-ẹ̀rí tàbí àwòrán àmì-ẹ̀yẹ",
      pasteLabel: "tàbí kí ẹ lẹ ìwé-ẹ̀rí náà síbí (VC-JWT)",
      check: "Ṣàyẹ̀wò",
      howTitle: "Bí àyẹ̀wò náà ṣe ń ṣiṣẹ́",
      how: "Ìwé-ẹ̀rí jẹ́ ìwé-ẹ̀rí Open Badges 3.0 tí ẹni tó fún un fi kọ́kọ́rọ́ Ed25519 buwọ́ lù. " +
        "Ẹni tó fún un ń tẹ kọ́kọ́rọ́ rẹ̀ (jwks.json) àti àkọsílẹ̀ ipò méjì tí ó buwọ́ lù jáde ní " +
        "àdírẹ́sì tirẹ̀, fódà yìí, kò sì tẹ nǹkan mìíràn jáde: kò sí orúkọ ẹnikẹ́ni níbẹ̀. " +
        "Ojú-ìwé yìí ń fi kọ́kọ́rọ́ tí a tẹ̀ jáde níbí ṣàyẹ̀wò ìbuwọ́lù náà, ó ń wò pé ìwé-ẹ̀rí náà " +
        "dárúkọ àdírẹ́sì yìí gẹ́gẹ́ bí ti ẹni tó fún un, àti pé àkọsílẹ̀ ipò, tí a fi kọ́kọ́rọ́ kan " +
        "náà buwọ́ lù tí a sì ń sọ di tuntun lọ́sọ̀ọ̀sẹ̀, kò sọ pé a fagi lé e tàbí pé a fi òmíràn " +
        "rọ́pò rẹ̀. Ẹ̀rọ aṣàwákiri yìí ń rántí kọ́kọ́rọ́ ẹni tó fún un àti àkọsílẹ̀ ipò tuntun jù, " +
        "yóò sì sọ fún yín bí kọ́kọ́rọ́ bá yí padà tàbí bí àkọsílẹ̀ àtijọ́ bá padà wá. Àyẹ̀wò kan " +
        "náà wà lórí ìlà àṣẹ: gradacc-certify verify FILE.",
      checking: "À ń ṣàyẹ̀wò…",
      valid: (id) => `Ìwé-ẹ̀rí tòótọ́ ni: ${id}`,
      invalid: "Kì í ṣe ìwé-ẹ̀rí tòótọ́",
      cannot: "A kò lè ṣàyẹ̀wò rẹ̀",
      asked: (id) => `Ìwé-ẹ̀rí ${id} ni ẹ wá wò. Ojú-ìwé yìí kò ṣe àkójọ àwọn ìwé-ẹ̀rí (kò tẹ ` +
        "orúkọ ẹnikẹ́ni jáde): ẹ yan fáìlì ìwé-ẹ̀rí tàbí àwòrán àmì-ẹ̀yẹ tí akẹ́kọ̀ọ́ fún yín.",
      rows: {
        name: "Orúkọ", achievement: "Àṣeyọrí", course: "Ẹ̀kọ́", issuer: "Ẹni tó fún un",
        place: "Àdírẹ́sì ẹni tó fún un", score: "Máàkì", validFrom: "Ó bẹ̀rẹ̀ láti",
        key: "Kọ́kọ́rọ́ ẹni tó fún un", status: "Ipò",
      },
      score: (value, max, needed) => `${value} nínú ${max} (máàkì tó yẹ: ${needed})`,
      standing: "a kò fagi lé e, a kò sì fi òmíràn rọ́pò rẹ̀",
      fromDisk: (place, fp) => "A ṣí i láti orí kọ̀ǹpútà: a fi ẹ̀dà kọ́kọ́rọ́ ẹni tó fún un tí a " +
        `fi pamọ́ pẹ̀lú ojú-ìwé yìí ṣàyẹ̀wò rẹ̀, kì í ṣe èyí tí a mú wá láti ${place}. Ẹ fi àmì ` +
        `ìdánimọ̀ rẹ̀, ${fp}, wé èyí tí a tẹ̀ sórí ìwé-ẹ̀rí náà.`,
      reasons: {
        notCredential: () => "èyí kì í ṣe ìwé-ẹ̀rí Open Badges (VC-JWT, tàbí àwòrán àmì-ẹ̀yẹ " +
          "tó gbé ọ̀kan)",
        signature: () => "ìbuwọ́lù náà kò bá a mu: ẹnìkan yí ìwé-ẹ̀rí náà padà lẹ́yìn tí a " +
          "buwọ́ lù ú, tàbí kì í ṣe kọ́kọ́rọ́ ẹni tó fún un ni a fi buwọ́ lù ú",
        otherKey: () => "kọ́kọ́rọ́ tí ẹni tó fún un kò tẹ̀ jáde ni a fi buwọ́ lù ú (kọ́kọ́rọ́ mìíràn)",
        claims: (p) => `àmì JWT rẹ̀, ${p.claim}, kò bá ìwé-ẹ̀rí tí ó gbé mu`,
        elsewhere: (p) => `ojú-ìwé yìí wà ní ${p.page}, kì í ṣe ní àdírẹ́sì ẹni tó fún un, ` +
          `${p.place}: ojú-ìwé ẹni tó fún un nìkan ló lè fi kọ́kọ́rọ́ rẹ̀ ṣàyẹ̀wò. Ẹ ṣí ${p.place}`,
        otherIssuer: (p) => `ìwé-ẹ̀rí náà dárúkọ ẹlòmíràn (${p.issuer}) gẹ́gẹ́ bí ẹni tó fún un, ` +
          "kì í ṣe ẹni tí ẹ̀dà ojú-ìwé yìí jẹ́ tirẹ̀",
        keyChanged: (p) => "kọ́kọ́rọ́ tí ẹni tó fún un tẹ̀ jáde ti yí padà láti ìgbà tí ẹ̀rọ " +
          `aṣàwákiri yìí ti ṣàyẹ̀wò rẹ̀ kẹ́yìn (tẹ́lẹ̀: ${p.before}, nísinsìnyí: ${p.now}): ẹ bi ` +
          "ẹni tó fún un, ní ọ̀nà mìíràn, èwo ni tirẹ̀",
        revoked: () => "a ti fagi lé e: àkọsílẹ̀ ipò ẹni tó fún un sọ pé a ti fagi lé ìwé-ẹ̀rí yìí",
        superseded: () => "a ti fi òmíràn rọ́pò rẹ̀: ẹni tó fún un ti tún ìwé-ẹ̀rí yìí ṣe; ẹ " +
          "béèrè èyí tó wà lọ́wọ́lọ́wọ́ lọ́wọ́ akẹ́kọ̀ọ́ náà",
        stale: (p) => `ó ti pẹ́ jù: ó yẹ kí àkọsílẹ̀ ipò tuntun ti rọ́pò èyí ní ${p.due}; ìwé-ẹ̀rí ` +
          "tí a fagi lé láti ìgbà náà yóò ṣì dà bí tòótọ́",
        replayed: (p) => `àkọsílẹ̀ ipò àtijọ́ ni: èyí (a ṣe é ní ${p.issued}, ó yẹ kí a rọ́pò rẹ̀ ` +
          `ní ${p.due}) ti pẹ́ ju èyí tí ẹ̀rọ aṣàwákiri yìí ti ṣàyẹ̀wò tẹ́lẹ̀ lọ`,
        listForged: () => "kì í ṣe kọ́kọ́rọ́ ẹni tó fún un ni a fi buwọ́ lu àkọsílẹ̀ ipò náà",
        listWrong: () => "kì í ṣe àkọsílẹ̀ ipò tí ìwé-ẹ̀rí náà dárúkọ nìyí",
        future: (p) => `ó sọ pé a ṣe é ní ${p.when}, lọ́jọ́ iwájú: ẹ ṣàyẹ̀wò aago kọ̀ǹpútà yìí`,
        noStatus: () => "ìbuwọ́lù náà tọ́, ṣùgbọ́n a kò mọ ipò rẹ̀: a kò rí àkọsílẹ̀ ipò náà kà",
        unavailable: (p) => `ojú-òpó yìí kò tẹ ${p.file} jáde`,
        noCopy: () => "a ṣí i láti orí kọ̀ǹpútà láìsí published.js lẹ́gbẹ̀ẹ́ rẹ̀: ẹ ṣí ojú-ìwé " +
          "ẹni tó fún un lórí https, tàbí kí ẹ pèsè fódà yìí (python -m http.server)",
      },
    },
  };

  const asked = new URLSearchParams(location.search);
  const language = asked.get("lang") === "yo" ? "yo" : "en";
  const words = TEXT[language];

  // A refusal, or (cannot = true) a check that could not be made; code names the reason.
  class Refusal extends Error {
    constructor(code, params = {}, cannot = false) {
      super(words.reasons[code](params));
      this.code = code;
      this.cannot = cannot;
    }
  }

  // --- bytes ---

  function fromBase64url(text) {
    if (typeof text !== "string" || !/^[A-Za-z0-9_-]*$/.test(text)) throw new Refusal("notCredential");
    const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  }

  const utf8 = (bytes) => new TextDecoder("utf-8", { fatal: true }).decode(bytes);

  function parseToken(token) {
    const parts = String(token).trim().split(".");
    if (parts.length !== 3) throw new Refusal("notCredential");
    try {
      const header = JSON.parse(utf8(fromBase64url(parts[0])));
      const payload = JSON.parse(utf8(fromBase64url(parts[1])));
      if (!header || typeof header !== "object" || !payload || typeof payload !== "object") throw new Error();
      return { header, payload, signed: `${parts[0]}.${parts[1]}`, signature: fromBase64url(parts[2]) };
    } catch (error) {
      if (error instanceof Refusal) throw error;
      throw new Refusal("notCredential");
    }
  }

  // The credential a baked PNG carries: its iTXt chunk "openbadgecredential" (OB 3.0, 5.3).
  function unbake(bytes) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = 8;
    while (at + 8 <= bytes.length) {
      const length = view.getUint32(at);
      const kind = String.fromCharCode(...bytes.slice(at + 4, at + 8));
      const data = bytes.slice(at + 8, at + 8 + length);
      if (kind === "iTXt") {
        const keywordEnd = data.indexOf(0);
        if (String.fromCharCode(...data.slice(0, keywordEnd)) === "openbadgecredential") {
          let rest = keywordEnd + 3; // the NUL, the compression flag and method (0, 0)
          rest = data.indexOf(0, rest) + 1; // the language tag
          rest = data.indexOf(0, rest) + 1; // the translated keyword
          return utf8(data.slice(rest));
        }
      }
      at += 12 + length;
    }
    throw new Refusal("notCredential");
  }

  async function sha256(bytes) {
    return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  }

  // As signing.fingerprint: SHA-256 of the raw key, 20 hex digits in groups of four.
  async function fingerprintOf(jwk) {
    const digits = [...(await sha256(fromBase64url(jwk.x)))].slice(0, 10)
      .map((b) => b.toString(16).padStart(2, "0")).join("").toUpperCase();
    return "SHA256:" + digits.match(/.{4}/g).join("-");
  }

  // --- what is published beside the page ---

  function loadScript(address) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = address;
      script.onload = resolve;
      script.onerror = reject;
      document.head.append(script);
    });
  }

  let copy = null; // published.js, from disk
  async function publishedText(name) {
    if (location.protocol === "file:") {
      if (copy === null) {
        try {
          await loadScript("published.js");
        } catch {
          throw new Refusal("noCopy", {}, true);
        }
        copy = globalThis.gradaccPublished ?? null;
        if (copy === null) throw new Refusal("noCopy", {}, true);
      }
      return typeof copy[name] === "string" ? copy[name] : null;
    }
    const response = await fetch(name, { cache: "no-store" });
    return response.ok ? response.text() : null;
  }

  // The issuer's place this page stands for: over http(s), its own folder; from disk, the
  // issuer whose copy (published.js) lies beside it.
  async function pagePlace() {
    if (location.protocol === "file:") {
      await publishedText("issuer.json");
      return copy.issuer.replace(/issuer\.json$/, "");
    }
    return new URL(".", location.href).href;
  }

  // --- the checks ---

  const epoch = (text) => Math.floor(Date.parse(text) / 1000);

  async function verifySigned(parsed, keySet) {
    const jwk = (keySet?.keys ?? []).find((k) => k && k.kid === parsed.header.kid);
    if (!jwk) throw new Refusal("otherKey");
    if (parsed.header.alg !== "EdDSA" || jwk.kty !== "OKP" || jwk.crv !== "Ed25519") {
      throw new Refusal("otherKey");
    }
    const key = await crypto.subtle.importKey(
      "jwk", { kty: "OKP", crv: "Ed25519", x: jwk.x }, { name: "Ed25519" }, false, ["verify"]);
    const ok = await crypto.subtle.verify(
      { name: "Ed25519" }, key, parsed.signature, new TextEncoder().encode(parsed.signed));
    if (!ok) throw new Refusal("signature");
    return jwk;
  }

  // OB 3.0, 8.2.4.1: the claims say what the credential inside says.
  function checkClaims(c) {
    const issuer = typeof c.issuer === "object" ? c.issuer?.id : c.issuer;
    const expected = { iss: issuer, jti: c.id, nbf: epoch(c.validFrom) };
    if (c.credentialSubject?.id !== undefined) expected.sub = c.credentialSubject.id;
    if (c.validUntil !== undefined) expected.exp = epoch(c.validUntil);
    for (const [claim, value] of Object.entries(expected)) {
      if (c[claim] !== value) throw new Refusal("claims", { claim });
    }
  }

  function rememberKey(issuer, fp) {
    let before = null;
    try {
      before = localStorage.getItem(KEY_SEEN + issuer);
    } catch {
      before = null; // storage off: nothing seen
    }
    if (before && before !== fp) throw new Refusal("keyChanged", { before, now: fp });
    try {
      localStorage.setItem(KEY_SEEN + issuer, fp);
    } catch {
      // a private window may refuse storage: this visit cannot remember the key
    }
  }

  async function inflate(bytes) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  async function checkStatus(entry, credential, keySet, place, now) {
    const address = String(entry.statusListCredential ?? "");
    if (!address.startsWith(place)) throw new Refusal("listWrong");
    const text = await publishedText(address.slice(place.length));
    if (text === null) throw new Refusal("noStatus", {}, true);
    const parsed = parseToken(text);
    try {
      await verifySigned(parsed, keySet);
    } catch (error) {
      if (error.code === "notCredential") throw error;
      throw new Refusal("listForged");
    }
    const listed = parsed.payload;
    checkClaims(listed);
    const subject = listed.credentialSubject ?? {};
    if (listed.id !== address || subject.statusPurpose !== entry.statusPurpose ||
        listed.issuer?.id !== credential.issuer.id ||
        !(listed.type ?? []).includes("BitstringStatusListCredential")) {
      throw new Refusal("listWrong");
    }
    const when = (text) => `${text.slice(0, 10)} ${text.slice(11, 16)} UTC`;
    if (Date.parse(listed.validFrom) > now + CLOCK_SLACK_MS) {
      throw new Refusal("future", { when: when(listed.validFrom) });
    }
    if (now > Date.parse(listed.validUntil)) throw new Refusal("stale", { due: when(listed.validUntil) });
    const slot = LIST_SEEN + listed.id;
    let newest = null;
    try {
      newest = localStorage.getItem(slot);
    } catch {
      newest = null;
    }
    if (newest && Date.parse(listed.validFrom) < Date.parse(newest)) {
      throw new Refusal("replayed", { issued: when(listed.validFrom), due: when(listed.validUntil) });
    }
    try {
      localStorage.setItem(slot, listed.validFrom);
    } catch {
      // storage off
    }
    const encoded = String(subject.encodedList ?? "");
    if (!encoded.startsWith("u")) throw new Refusal("listWrong");
    const bits = await inflate(fromBase64url(encoded.slice(1)));
    const index = Number(entry.statusListIndex);
    if (!Number.isInteger(index) || index < 0 || index >= bits.length * 8) throw new Refusal("listWrong");
    const set = (bits[index >> 3] & (0x80 >> (index & 7))) !== 0;
    if (set) throw new Refusal(entry.statusPurpose === "revocation" ? "revoked" : "superseded");
    return listed;
  }

  // The facts of a credential's VC-JWT text, every check made; Refusal says why not.
  async function checkToken(token, now = Date.now()) {
    const parsed = parseToken(token);
    const credential = parsed.payload;
    const issuer = credential.iss;
    if (typeof issuer !== "string" || !issuer.endsWith("/issuer.json")) throw new Refusal("notCredential");
    const place = issuer.slice(0, -"issuer.json".length);
    const here = await pagePlace();
    if (here !== place) {
      if (location.protocol === "file:") throw new Refusal("otherIssuer", { issuer: place });
      throw new Refusal("elsewhere", { page: here, place });
    }
    const keysText = await publishedText("jwks.json");
    if (keysText === null) throw new Refusal("unavailable", { file: "jwks.json" }, true);
    const keySet = JSON.parse(keysText);
    const jwk = await verifySigned(parsed, keySet);
    if (!String(parsed.header.kid).startsWith(place)) throw new Refusal("otherKey");
    checkClaims(credential);
    if (!(credential.type ?? []).includes("OpenBadgeCredential")) throw new Refusal("notCredential");
    const fp = await fingerprintOf(jwk);
    rememberKey(credential.issuer.id, fp);
    const statuses = credential.credentialStatus;
    if (!Array.isArray(statuses) || statuses.length === 0) throw new Refusal("noStatus", {}, true);
    for (const entry of statuses) await checkStatus(entry, credential, keySet, place, now);
    return { credential, fingerprint: fp, place };
  }

  async function tokenOfFile(file) {
    if (file.size > MAX_BYTES) throw new Refusal("notCredential");
    const bytes = new Uint8Array(await file.arrayBuffer());
    const png = [0x89, 0x50, 0x4e, 0x47].every((b, i) => bytes[i] === b);
    return png ? unbake(bytes) : utf8(bytes).trim();
  }

  // --- the page ---

  function show(kind, title, rows = [], note = null) {
    const verdict = document.getElementById("verdict");
    verdict.className = kind;
    const heading = document.createElement("h2");
    heading.textContent = title;
    const parts = [heading];
    if (note) {
      const warning = document.createElement("p");
      warning.className = "warning";
      warning.textContent = note;
      parts.push(warning);
    }
    if (rows.length) {
      const table = document.createElement("table");
      for (const [label, value] of rows) {
        const row = table.insertRow();
        const th = document.createElement("th");
        th.textContent = label;
        row.append(th);
        row.insertCell().textContent = value;
      }
      parts.push(table);
    }
    verdict.replaceChildren(...parts);
  }

  async function report(getToken) {
    show("working", words.checking);
    try {
      const { credential: c, fingerprint: fp, place } = await checkToken(await getToken());
      const subject = c.credentialSubject;
      const achievement = subject.achievement;
      const name = (subject.identifier ?? []).find((i) => i.identityType === "name");
      const best = achievement.resultDescription?.[0] ?? {};
      const id = c.id.split("?id=").pop();
      const r = words.rows;
      show("valid", words.valid(id), [
        [r.name, name?.identityHash ?? ""], [r.achievement, achievement.name],
        [r.course, achievement.description], [r.issuer, c.issuer.name], [r.place, place],
        [r.score, words.score(subject.result?.[0]?.value, best.valueMax, best.requiredValue)],
        [r.validFrom, c.validFrom], [r.key, fp], [r.status, words.standing],
      ], location.protocol === "file:" ? words.fromDisk(place, fp) : null);
    } catch (error) {
      if (error instanceof Refusal) {
        show("invalid", `${error.cannot ? words.cannot : words.invalid}: ${error.message}`);
      } else {
        show("invalid", `${words.cannot}: ${error}`);
      }
    }
  }

  function start() {
    document.documentElement.lang = language;
    for (const element of document.querySelectorAll("[data-text]")) {
      element.textContent = words[element.dataset.text];
    }
    document.title = words.title;
    const id = asked.get("id"); // the QR code's address
    if (id) document.getElementById("asked").textContent = words.asked(id.slice(0, 20));
    for (const other of ["en", "yo"]) {
      const link = document.getElementById(`lang-${other}`);
      const query = new URLSearchParams(location.search);
      query.set("lang", other);
      link.href = `?${query}`;
    }
    document.getElementById("credential-file").addEventListener("change", (event) => {
      const file = event.target.files[0];
      if (file) report(() => tokenOfFile(file));
    });
    document.getElementById("by-text").addEventListener("submit", (event) => {
      event.preventDefault();
      report(async () => document.getElementById("credential-text").value);
    });
  }

  globalThis.gradaccVerify = { checkToken, unbake, fingerprintOf, Refusal };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
