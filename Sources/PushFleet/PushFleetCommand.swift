import ArgumentParser

/// `pushfleet`: the command-line entry point of every PushFleet process and tool.
@main
struct PushFleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushfleet",
        abstract: "A push pipeline for iOS apps: Kafka jobs in, APNs notifications out.",
        subcommands: [
            DemoCommand.self, WorkerCommand.self, FeedbackCommand.self, APICommand.self, GatewayCommand.self, SendCommand.self, CampaignCommand.self,
            DevicesCommand.self, UsersCommand.self, ChannelsCommand.self, ActivitiesCommand.self, CredentialsCommand.self, RegistryCommand.self,
            StatsCommand.self, JobsCommand.self, JobCommand.self, TopicsCommand.self,
        ])
}
