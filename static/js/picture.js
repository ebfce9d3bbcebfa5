// A question's picture on the host screen and the phone: the app's own URL (CSP img-src 'self') and its alt text.
// A question without one hides the figure; the section says so in data-picture, so the stylesheet can make room.

export function showPicture(figure, image) {
  const section = figure.closest("section");
  if (!image?.url) {
    figure.hidden = true;
    figure.replaceChildren();
    if (section) delete section.dataset.picture;
    return;
  }
  const current = figure.querySelector("img");
  if (!current || current.getAttribute("src") !== image.url || current.alt !== image.alt) {
    const img = document.createElement("img");
    img.src = image.url;
    img.alt = image.alt;
    img.decoding = "async";
    figure.replaceChildren(img);
  }
  figure.hidden = false;
  if (section) section.dataset.picture = "";
}
