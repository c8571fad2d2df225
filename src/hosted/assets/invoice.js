// The hosted invoice page: the print button (shown only when this script runs). Served by Weir from /assets.
const print = document.getElementById('print');
if (print) {
  print.hidden = false;
  print.addEventListener('click', () => window.print());
}
