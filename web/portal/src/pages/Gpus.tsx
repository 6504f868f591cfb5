export function Gpus() {
  return <p>Coming.</p>;
}
