// The front page's guide: a Listen button per language (the browser's own speech).
// Plain script, no library, nothing fetched: speech comes from speechSynthesis, and where the
// reader's system has no voice for a language the button says so instead of reading Yorùbá
// with an English voice.
//
// Browsers load their voices late: Chrome's getVoices() is empty until it fires
// `voiceschanged`, so a click that came first would find no voice where there is one. A click
// therefore waits for that event (at most VOICE_WAIT_MS: a browser with no voice at all may
// never fire it) before it decides. The wait stays well inside the few seconds in which a
// click still allows the page to speak.
(function () {
  "use strict";

  var VOICE_WAIT_MS = 3000;

  // The browser's voices, once it has loaded them (or after the wait, whatever it has then).
  function loadedVoices(speech) {
    return new Promise(function (resolve) {
      var voices = speech.getVoices();
      if (voices.length) return resolve(voices);
      var done = false;
      function finish() {
        if (done) return;
        done = true;
        speech.removeEventListener("voiceschanged", finish);
        resolve(speech.getVoices());
      }
      speech.addEventListener("voiceschanged", finish);
      setTimeout(finish, VOICE_WAIT_MS);
    });
  }

  function voiceFor(voices, lang) {
    for (var i = 0; i < voices.length; i++) {
      if (voices[i].lang.toLowerCase().split(/[-_]/)[0] === lang) return voices[i];
    }
    return null;
  }

  // The guide's words in one language: its half of every part, spaces collapsed.
  function textOf(guide, lang) {
    var halves = guide.querySelectorAll('.gradacc-guide-part > [lang="' + lang + '"]');
    var text = [];
    for (var i = 0; i < halves.length; i++) text.push(halves[i].textContent);
    return text.join(" ").replace(/\s+/g, " ").trim();
  }

  function setup(guide) {
    var note = guide.querySelector(".gradacc-listen-note");
    var buttons = guide.querySelectorAll(".gradacc-listen");

    function listen(button) {
      var lang = button.dataset.lang;
      var speech = window.speechSynthesis;
      note.textContent = "";
      note.lang = lang;
      var voices = speech ? loadedVoices(speech) : Promise.resolve([]);
      voices.then(function (found) {
        var voice = voiceFor(found, lang);
        if (!voice) {
          note.textContent = button.dataset.noVoice;
          return;
        }
        var utterance = new SpeechSynthesisUtterance(textOf(guide, lang));
        utterance.lang = lang;
        utterance.voice = voice;
        speech.cancel();
        speech.speak(utterance);
      });
    }

    for (var i = 0; i < buttons.length; i++) {
      buttons[i].addEventListener("click", function (event) {
        listen(event.currentTarget);
      });
    }
    // Asking once at load starts Chrome's loading of its voices before the first click.
    if (window.speechSynthesis) window.speechSynthesis.getVoices();
  }

  document.addEventListener("DOMContentLoaded", function () {
    var guides = document.querySelectorAll(".gradacc-guide");
    for (var i = 0; i < guides.length; i++) setup(guides[i]);
  });
})();
