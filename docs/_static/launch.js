// The theme's launch menu is a rocket with no words: name it, on screen and for screen readers,
// in the edition's language (<html lang="...">, set by Sphinx's `language`).
const LAUNCH_WORDS = {
  en: ["Run this lesson", "Run this lesson on Colab or Binder"],
  yo: ["Ṣe ẹ̀kọ́ yìí", "Ṣe ẹ̀kọ́ yìí lórí Colab tàbí Binder"],
};

document.addEventListener("DOMContentLoaded", () => {
  const language = (document.documentElement.lang || "en").slice(0, 2);
  const [text, label] = LAUNCH_WORDS[language] || LAUNCH_WORDS.en;
  for (const button of document.querySelectorAll(".dropdown-launch-buttons > button")) {
    button.setAttribute("aria-label", label);
    const span = document.createElement("span");
    span.className = "gradacc-launch-label";
    span.textContent = text;
    button.append(span);
  }
});
