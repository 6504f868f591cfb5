// Number formats shared by the pages (GPU metrics, utilisation).

export function pct(v: number | null | undefined): string {
  return v == null ? '—' : `${Math.round(v)} %`;
}

export function mib(v: number | null | undefined): string {
  if (v == null) return '—';
  return v >= 1024 ? `${(v / 1024).toFixed(1)} GiB` : `${Math.round(v)} MiB`;
}

export function celsius(v: number | null | undefined): string {
  return v == null ? '—' : `${Math.round(v)} °C`;
}

export function watts(v: number | null | undefined): string {
  return v == null ? '—' : `${Math.round(v)} W`;
}
