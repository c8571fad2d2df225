// The payment link page: a suggested amount fills the amount input. Served by Weir from /assets.
// Without this script each suggested amount is a submit button (one press opens the session with
// it); with it, a plain button that only fills the amount in, for the payer to change or submit.
const suggested = document.getElementById('suggested');
if (suggested) {
  const input = document.querySelector(`[name="${suggested.dataset.input}"]`);
  for (const button of suggested.querySelectorAll('.suggested')) {
    button.type = 'button';
    button.addEventListener('click', () => {
      input.value = button.dataset.amount;
    });
  }
}
