{{/* Labels every object gets: the Kustomize base's part-of, and Helm's own. */}}
{{- define "egs.labels" -}}
app.kubernetes.io/part-of: egs
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{- define "egs.image" -}}
{{ .repository }}:{{ .tag }}
{{- end }}
