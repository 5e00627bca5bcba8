"""What every kraftsman command shares, one module a job (this file holds no code):

- status: ExitStatus (the exit codes the README documents) and ToolError (one line, one exit status);
- environment: Environment, the streams, directory and variables a command uses, injected for tests;
- boundary: run_command and exit_with, the error boundary and the global flags; usage_exit, the one rule for a
  bad command line;
- key_values: KEY=VALUE words (-X, --override, --conf);
- kafka_release: the Kafka release a command speaks for (KRAFTSMAN_KAFKA_VERSION, a profile's kafka-version);
- output: --output text|json|yaml rendering; profiles: connection profiles; env_overrides: KAFKA_* and
  KRAFTSMAN_* variables; typer_app, shells: the typer/click glue, help and completion scripts;
- admin, admin_options: what the tools that call a cluster share: the connection Context, Failure, the
  admin_call failure boundary and the typer connection options.
"""
