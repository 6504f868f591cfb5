export function Home() {
  return <p>Coming.</p>;
}
