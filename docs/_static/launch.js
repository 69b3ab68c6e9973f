// The theme's launch menu is a rocket with no words: name it, on screen and for screen readers.
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll(".dropdown-launch-buttons > button")) {
    button.setAttribute("aria-label", "Run this lesson on Colab or Binder");
    const label = document.createElement("span");
    label.className = "gradacc-launch-label";
    label.textContent = "Run this lesson";
    button.append(label);
  }
});
