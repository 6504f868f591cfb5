export function Tokens() {
  return <p>Coming.</p>;
}
