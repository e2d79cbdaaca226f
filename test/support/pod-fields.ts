/** The spec's runner pod fields (runner-pod-fields.ts), each set the way a platform team would: for tests of every layer. */
export const ALL_POD_FIELDS = {
  volumes: [
    { name: 'users', configMap: { name: 'users', items: [{ key: 'users.csv', path: 'users.csv' }] } },
    { name: 'creds', secret: { secretName: 'api-token' } },
    { name: 'scratch', emptyDir: { sizeLimit: '1Gi' } },
    { name: 'bundle', projected: { sources: [{ configMap: { name: 'users' } }, { secret: { name: 'api-token', optional: true } }] } },
  ],
  volumeMounts: [
    { name: 'users', mountPath: '/data', readOnly: true },
    { name: 'creds', mountPath: '/creds', readOnly: true },
    { name: 'scratch', mountPath: '/scratch' },
    { name: 'bundle', mountPath: '/bundle', readOnly: true },
  ],
  affinity: {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'node.kubernetes.io/pool', operator: 'In', values: ['load'] }] }],
      },
    },
  },
  topologySpreadConstraints: [
    {
      maxSkew: 1,
      topologyKey: 'topology.kubernetes.io/zone',
      whenUnsatisfiable: 'ScheduleAnyway',
      labelSelector: { matchLabels: { 'loadplane.io/role': 'runner' } },
    },
  ],
  imagePullSecrets: [{ name: 'registry-creds' }],
  priorityClassName: 'load-low',
};
