// The front page's guide: a language switch and a Listen button (the browser's own speech).
// Plain script, no library, nothing fetched: speech comes from speechSynthesis, and where the
// reader's system has no voice for the page's language the button says so instead of reading
// Yorùbá with an English voice.
(function () {
  "use strict";

  function setup(guide) {
    var sections = guide.querySelectorAll("section[lang]");
    var switches = guide.querySelectorAll("button[data-lang]");
    var listen = guide.querySelector(".gradacc-listen");
    var note = guide.querySelector(".gradacc-listen-note");

    function visible() {
      for (var i = 0; i < sections.length; i++) {
        if (!sections[i].hidden) return sections[i];
      }
      return sections[0];
    }

    function show(lang) {
      for (var i = 0; i < sections.length; i++) {
        sections[i].hidden = sections[i].lang !== lang;
      }
      for (var j = 0; j < switches.length; j++) {
        switches[j].setAttribute("aria-pressed", String(switches[j].dataset.lang === lang));
      }
      listen.textContent = visible().dataset.listen;
      note.textContent = "";
    }

    function voiceFor(lang) {
      var voices = window.speechSynthesis.getVoices();
      for (var i = 0; i < voices.length; i++) {
        if (voices[i].lang.toLowerCase().split(/[-_]/)[0] === lang) return voices[i];
      }
      return null;
    }

    listen.addEventListener("click", function () {
      var section = visible();
      var voice = "speechSynthesis" in window ? voiceFor(section.lang) : null;
      if (!voice) {
        note.textContent = section.dataset.noVoice;
        return;
      }
      var text = section.querySelector(".gradacc-guide-text").textContent;
      var utterance = new SpeechSynthesisUtterance(text.replace(/\s+/g, " ").trim());
      utterance.lang = section.lang;
      utterance.voice = voice;
      window.speechSynthesis.cancel();
      window.speechSynthesis.speak(utterance);
      note.textContent = "";
    });

    for (var k = 0; k < switches.length; k++) {
      switches[k].addEventListener("click", function (event) {
        show(event.currentTarget.dataset.lang);
      });
    }
    show(sections[0].lang);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var guides = document.querySelectorAll(".gradacc-guide");
    for (var i = 0; i < guides.length; i++) setup(guides[i]);
  });
})();
