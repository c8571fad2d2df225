// The payment link page: a suggested amount fills the amount input. Served by Weir from /assets.
const suggested = document.getElementById('suggested');
if (suggested) {
  const input = document.querySelector(`[name="${suggested.dataset.input}"]`);
  for (const button of suggested.querySelectorAll('.suggested')) {
    button.addEventListener('click', () => {
      input.value = button.dataset.amount;
    });
  }
}
